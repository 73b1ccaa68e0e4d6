"""Realistic citations to check: passages of the shared test documents (Alice in Wonderland,
the Copyright Office's DMCA summary, the RISC-V ABI) as the search returns them, and sentences
an answer might write about them, each cited to the passage it came from (supported), or to
another one, or with a number or name changed (unsupported).

Written by hand to set the thresholds of quire.synthesis.citecheck: the sentences word things
as a small model does (its facts copy the passage's words, the answer rewords some of them).
"""

from __future__ import annotations

from quire.synthesis.citecheck import SourceText

RABBIT_HOLE = SourceText(
    (
        "Down The Rabbit-Hole\n\nAlice was beginning to get very tired of sitting by her "
        "sister on the bank, and of having nothing to do. Once or twice she had peeped into "
        "the book her sister was reading, but it had no pictures or conversations in it, "
        '"and what is the use of a book," thought Alice, "without pictures or '
        'conversations?"\n\nSo she was considering in her own mind (as well as she could, '
        "for the day made her feel very sleepy and stupid), whether the pleasure of making a "
        "daisy-chain would be worth the trouble of getting up and picking the daisies, when "
        "suddenly a White Rabbit with pink eyes ran close by her.\n\nThere was nothing so "
        "very remarkable in that, nor did Alice think it so very much out of the way to hear "
        'the Rabbit say to itself, "Oh dear! Oh dear! I shall be too late!" But when the '
        "Rabbit actually took a watch out of its waistcoat-pocket and looked at it and then "
        "hurried on, Alice started to her feet, for it flashed across her mind that she had "
        "never before seen a rabbit with either a waistcoat-pocket, or a watch to take out "
        "of it, and, burning with curiosity, she ran across the field after it and was just "
        "in time to see it pop down a large rabbit-hole, under the hedge. In another moment, "
        "down went Alice after it!\n\nThe rabbit-hole went straight on like a tunnel for "
        "some way and then dipped suddenly down, so suddenly that Alice had not a moment to "
        "think about stopping herself before she found herself falling down what seemed to "
        "be a very deep well."
    ),
    "Alice's Adventures in Wonderland, section 2 (Down The Rabbit-Hole)",
)
DRINK_ME = SourceText(
    (
        "inches high. She tried the little golden key in the lock, and to her great delight, "
        "it fitted!\n\nAlice opened the door and found that it led into a small passage, not "
        "much larger than a rat-hole; she knelt down and looked along the passage into the "
        "loveliest garden you ever saw. How she longed to get out of that dark hall and "
        "wander about among those beds of bright flowers and those cool fountains, but she "
        'could not even get her head through the doorway. "Oh," said Alice, "how I wish I '
        'could shut up like a telescope! I think I could, if I only knew how to begin."\n\n'
        "Alice went back to the table, half hoping she might find another key on it, or at "
        "any rate, a book of rules for shutting people up like telescopes. This time she "
        'found a little bottle on it ("which certainly was not here before," said Alice), '
        "and tied 'round the neck of the bottle was a paper label, with the words \"DRINK "
        'ME" beautifully printed on it in large letters.\n\n"No, I\'ll look first," she '
        "said, \"and see whether it's marked 'poison' or not,\" for she had never forgotten "
        'that, if you drink from a bottle marked "poison," it is almost certain to '
        'disagree with you, sooner or later. However, this bottle was not marked "poison," '
        "so Alice ventured to taste it, and, finding it very nice (it had a sort of mixed "
        "flavor of cherry-tart, custard, pineapple, roast turkey, toffy and hot buttered "
        'toast), she very soon finished it off.\n\n"What a curious feeling!" said Alice. '
        '"I must be shutting up like a telescope!"'
    ),
    "Alice's Adventures in Wonderland, section 2 (Down The Rabbit-Hole)",
)
POOL_OF_TEARS = SourceText(
    (
        "to himself, \"Oh! the Duchess, the Duchess! Oh! won't she be savage if I've kept "
        'her waiting!"\n\nWhen the Rabbit came near her, Alice began, in a low, timid '
        'voice, "If you please, sir—" The Rabbit started violently, dropped the white '
        "kid-gloves and the fan and skurried away into the darkness as hard as he could go.\n"
        "\nAlice took up the fan and gloves and she kept fanning herself all the time she "
        'went on talking. "Dear, dear! How queer everything is to-day! And yesterday things '
        "went on just as usual. Was I the same when I got up this morning? But if I'm not "
        "the same, the next question is, 'Who in the world am I?' Ah, that's the great "
        'puzzle!"\n\nAs she said this, she looked down at her hands and was surprised to '
        "see that she had put on one of the Rabbit's little white kid-gloves while she was "
        'talking. "How can I have done that?" she thought. "I must be growing small '
        'again." She got up and went to the table to measure herself by it and found that '
        "she was now about two feet high and was going on shrinking rapidly. She soon found "
        "out that the cause of this was the fan she was holding and she dropped it hastily, "
        "just in time to save herself from shrinking away altogether."
    ),
    "Alice's Adventures in Wonderland, section 3 (The Pool Of Tears)",
)
LITTLE_BILL = SourceText(
    (
        "The Rabbit Sends In A Little Bill\n\nIt was the White Rabbit, trotting slowly back "
        "again and looking anxiously about as it went, as if it had lost something; Alice "
        'heard it muttering to itself, "The Duchess! The Duchess! Oh, my dear paws! Oh, my '
        "fur and whiskers! She'll get me executed, as sure as ferrets are ferrets! Where can "
        'I have dropped them, I wonder?" Alice guessed in a moment that it was looking for '
        "the fan and the pair of white kid-gloves and she very good-naturedly began hunting "
        "about for them, but they were nowhere to be seen—everything seemed to have changed "
        "since her swim in the pool, and the great hall, with the glass table and the little "
        "door, had vanished completely.\n\nVery soon the Rabbit noticed Alice, and called to "
        'her, in an angry tone, "Why, Mary Ann, what are you doing out here? Run home this '
        'moment and fetch me a pair of gloves and a fan! Quick, now!"\n\n"He took me for '
        'his housemaid!" said Alice, as she ran off. "How surprised he\'ll be when he finds '
        'out who I am!" As she said this, she came upon a neat little house, on the door of '
        'which was a bright brass plate with the name "W. RABBIT" engraved upon it. She '
        "went in without knocking and hurried upstairs, in great fear lest she should meet "
        "the real Mary Ann and be turned out of the house before she had found the fan and "
        "gloves."
    ),
    "Alice's Adventures in Wonderland, section 5 (The Rabbit Sends In A Little Bill)",
)
THICK_WOOD = SourceText(
    (
        'found herself safe in a thick wood.\n\n"The Duchess tucked her arm affectionately '
        'into Alice\'s."\n\n"The first thing I\'ve got to do," said Alice to herself, as '
        'she wande red about in the wood, "is to grow to my right size again; and the '
        "second thing i s to find my way into that lovely garden. I suppose I ought to eat "
        "or drink something or other, but the great question is 'What?'\"\n\nAlice looked "
        "all arou nd her at the flowers and the blades of grass, but she could notsee "
        "anything that loo kedlike the right thing to eat or drink under the circumstances. "
        "There was a large mushroom growing near her, about the same height as herself. She "
        "stretched herself u p on tiptoe and peeped over the edge and her eyes immediately "
        "met those of a large blue caterpillar, that was sitting on the top, with its "
        "armsfolded, quietly smoking a long hookah a nd taking not the smallest notice of "
        "her or of anything else."
    ),
    "Alice's Adventures in Wonderland, section 5 (The Rabbit Sends In A Little Bill)",
)
CATERPILLAR = SourceText(
    (
        "Advice From A Caterpillar\n\nAt last the Caterpillar took the hookah out of its "
        'mouth and addressed Alice in alanguid, sleepy voice.\n\n"Who are you?" said the '
        'Caterpillar.\n\nAlice replied, rather shyly, "I—I hardly know, sir, just at '
        "present—at least I know who I was when I got up this morning, but I think I must "
        'have changed several times since then."\n\n"Wha t do you mean by that?" said the '
        'Caterpillar, sternly. "Explain yourself!"\n\n"I can\'t explainmyself, I\'m afraid, '
        'sir," said Alice,"because I\'m not myself, you see—being so ma nydifferent sizes '
        'in a day is very confusing." She drew hers elf up and said very gravely, "I think '
        'you ought to tell me who you are, first."\n\n"Why?" said the Caterpillar.\n\nAs '
        "Alice could not think of any good reason and the Caterpillar seemed to be in a very "
        'u npleasant state of mind, she turned away.\n\n"Come back!" the Caterpillar '
        'called after her. "I\'ve something important to say!" Alice turned and came back '
        'again.\n\n"Keep your temper," said the Caterpillar.\n\n"Is that all?" said '
        'Alice, swallowing down her anger as well as she could.\n\n"No," said the '
        "Caterpillar.\n\nIt unfolded its arms, took the hookah out of its mouth again, and "
        'said, " So you think you\'re changed, do you?"\n\n"I\'m afr aid, I am, sir," said '
        "Alice. \"I can't remember things as I used—and I don't keep the same size for ten "
        'minutes together!"\n\n"What size d o you want to be?" asked the Caterpillar.'
    ),
    "Alice's Adventures in Wonderland, section 6 (Advice From A Caterpillar)",
)
MUSHROOM = SourceText(
    (
        'the same size for ten minutes together!"\n\n"What size d o you want to be?" '
        'asked the Caterpillar.\n\n"Oh, I\'mnot particular as to si ze," Alice hastily '
        "replied, \"only one doesn't like changing sooften, you know. I should like to be a "
        'little larger, sir, if you wouldn\'t mind," said Alice. "Three inches is such a '
        'wretched height to be."\n\n"It is a very good height indeed!" said the '
        "Caterpillar an grily, rearing itself upright as it spoke (it was exactly three "
        "inches high).\n\nIn a minute or two, the Caterpillar got down off the mushroom and "
        'crawled away in to the grass,merely remarking, as it went, "One side will make you '
        'grow taller, and the other side will make you grow shorter."\n\n"One side of '
        'what? The other side of what?" thought Alice to herself.\n\n"Of the mushroom," '
        "said the Caterpillar, just as if she had asked it aloud; and in another moment, it "
        "was out of sight.\n\nAlice remained looking thoughtfully at the mushroom for a "
        "minute, trying to make out whichwere the two sides of it. At last she stretched her "
        "arms 'round it as far as they would go, and broke off a bit of the edge with each "
        'hand.\n\n"And now which is which?" she said to herself, and nibbled a little of '
        "the right-hand bit to trythe effect. The next moment she felt a violent blow "
        "underneath her chin—it had struck her foot!"
    ),
    "Alice's Adventures in Wonderland, section 6 (Advice From A Caterpillar)",
)
CHESHIRE_CAT = SourceText(
    (
        'began Alice, rather timidly, "would you please tell me which way I ought to gofrom '
        'here?"\n\n"In that direction," the Cat said, waving the right paw \'round, '
        '"lives a Hatter; and in that direction," waving the other paw, "lives a March '
        "Hare. Visit either you like; they're both mad.\"\n\n\"But I don't want to go among "
        'mad people," Alice remarked.\n\n"Oh, you can\'t help that," said the Cat; "we\'re '
        'all mad here. Do you play croquet with the Queen to-day?"\n\n"I should like it '
        'very much," said Alice, "but I haven\'t been invited yet."\n\n"You\'ll see me '
        'there," said the Cat, and vanished.\n\nAlice had not gone much farther before she '
        "came in sight of the house of the March Hare; it was so large a house that she did "
        "not like to go near till she had nibbled some more of the left-hand bit of mushroom."
    ),
    "Alice's Adventures in Wonderland, section 7 (Pig And Pepper)",
)
TRIAL = SourceText(
    (
        "Who Stole The Tarts?\n\nThe King and Queen of Hearts were seated on their throne "
        "when they arrived, with a great crowd assembled about them—all sorts of little "
        "birds and beasts, as well as the whole pack of cards: the Knave was standing before "
        "them, in chains, with a soldier on each side to guard him; and near the King was "
        "the White Rabbit, with a trumpet in one hand and a scroll of parchment in the "
        "other. In the very middle of the court was a table, with a large dish of tarts upon "
        'it. "I wish they\'d get the trial done," Alice thought, "and hand \'round the '
        'refreshments!"\n\nThe judge, by the way, was the King and he wore his crown over '
        'his great wig. "That\'s the jury-box," thought Alice; "and those twelve creatures '
        '(some were animals and some were birds) I suppose they are the jurors."\n\nJust '
        'then the White Rabbit cried out "Silence in the court!"\n\n"Herald, read the '
        'accusation!" said the King.\n\nOn this, the White Rabbit blew three blasts on the '
        'trumpet, then unrolled the parchment-scroll and read as follows:\n\n"The Queen of '
        "Hearts, she made some tarts,\nAll on a summer day;\nThe Knave of Hearts, he stole "
        'those tarts\nAnd took them quite away!"\n\n"Call the first witness," said the '
        'King; and the White Rabbit blew three blasts on the trumpet and called out, "First '
        'witness!"\n\nThe first witness was the Hatter. He came in with a teacup in one '
        'hand and a piece of bread and butter in the other.\n\n"You ought to have '
        'finished," said the King. "When did you begin?"'
    ),
    "Alice's Adventures in Wonderland, section 10 (Who Stole The Tarts?)",
)
DREAM = SourceText(
    (
        'upon her face.\n\n"Wake up, Alice dear!" said her sister. "Why, what a long '
        'sleep you\'ve had!"\n\n"Oh, I\'ve had such a curious dream!" said Alice. And she '
        "told her sister, as well as she could remember them, all these strange adventures "
        "of hers that you have just been reading about. Alice got up and ran off, thinking "
        "while she ran, as well she might, what a wonderful dream it had been."
    ),
    "Alice's Adventures in Wonderland, section 11 (Alice's Evidence)",
)
DMCA_INTRO = SourceText(
    (
        "THE DIGITAL MILLENNIUM COPYRIGHT ACT OF 1998\n\nINTRODUCTION\n\nDecember 1998\n\n"
        "The Digital Millennium Copyright Act (DMCA) was signed into law by\nPresident "
        "Clinton on October 28, 1998. The legislation implements two 1996 World\n"
        "Intellectual Property Organization (WIPO) treaties: the WIPO Copyright Treaty and\n"
        "the WIPO Performances and Phonograms Treaty. The DMCA also addresses a\nnumber of "
        "other significant copyright-related issues.\n\nThe DMCA is divided into five "
        "titles:\n\n!\n\n!\n\n!\n\n!\n\n!\n\nTitle I, the “WIPO Copyright and Performances "
        "and Phonograms\nTreaties Implementation Act of 1998,” implements the WIPO\n"
        "treaties.\nTitle II, the “Online Copyright Infringement Liability Limitation\nAct,” "
        "creates limitations on the liability of online service providers for\ncopyright "
        "infringement when engaging in certain types of activities.\nTitle III, the "
        "“Computer Maintenance Competition Assurance\nAct,” creates an exemption for making "
        "a copy of a computer program\nby activating a computer for purposes of maintenance "
        "or repair.\nTitle IV contains six miscellaneous provisions, relating to the\n"
        "functions of the Copyright Office, distance education, the exceptions\nin the "
        "Copyright Act for libraries and for making ephemeral recordings,\n“webcasting” of "
        "sound recordings on the Internet, and the applicability\nof collective bargaining "
        "agreement obligations in the case of transfers\nof rights in motion pictures.\n"
        "Title V, the “Vessel Hull Design Protection Act,” creates a new form"
    ),
    "The Digital Millennium Copyright Act of 1998, p. 1 (INTRODUCTION)",
)
DMCA_TITLE_II = SourceText(
    (
        "TITLE II: ONLINE COPYRIGHT INFRINGEMENT LIABILITY LIMITATION\n\nTitle II of the "
        "DMCA adds a new section 512 to the Copyright Act to create\nfour new limitations on "
        "liability for copyright infringement by online service providers.\nThe limitations "
        "are based on the following four categories of conduct by a service\nprovider:\n\n"
        "1.\n2.\n3.\n\n4.\n\nTransitory communications;\nSystem caching;\nStorage of "
        "information on systems or networks at direction of users;\nand\nInformation "
        "location tools.\n\nNew section 512 also includes special rules concerning the "
        "application of these\nlimitations to nonprofit educational institutions.\n\nThe "
        "Fairness in Musical Licensing Act, Title II of Pub. L. No. 105-298, 112 Stat. "
        "2827,\n2830-34 (Oct. 27, 1998) also adds a new section 512 to the Copyright Act. "
        "This duplication of\nsection numbers will need to be corrected in a technical "
        "amendments bill."
    ),
    (
        "The Digital Millennium Copyright Act of 1998, p. 8 (TITLE II: ONLINE COPYRIGHT "
        "INFRINGEMENT LIABILITY LIMITATION)"
    ),
)
DMCA_ELIGIBILITY = SourceText(
    (
        "Eligibility for Limitations Generally\n\nA party seeking the benefit of the "
        "limitations on liability in Title II must qualify\nas a “service provider.” For "
        "purposes of the first limitation, relating to transitory\ncommunications, “service "
        "provider” is defined in section 512(k)(1)(A) as “an entity\noffering the "
        "transmission, routing, or providing of connections for digital online\n"
        "communications, between or among points specified by a user, of material of the "
        "user’s\nchoosing, without modification to the content of the material as sent or "
        "received.” For\npurposes of the other three limitations, “service provider” is more "
        "broadly defined in\nsection 512(k)(l)(B) as “a provider of online services or "
        "network access, or the operator\nof facilities therefor.”\n\nIn addition, to be "
        "eligible for any of the limitations, a service provider must\nmeet two overall "
        "conditions: (1) it must adopt and reasonably implement a policy of\nterminating in "
        "appropriate circumstances the accounts of subscribers who are repeat\ninfringers; "
        "and (2) it must accommodate and not interfere with “standard technical\nmeasures.” "
        "(Section 512(i)). “Standard technical measures” are defined as measures\nthat "
        "copyright owners use to identify or protect copyrighted works, that have been\n"
        "developed pursuant to a broad consensus of copyright owners and service providers\n"
        "in an open, fair and voluntary multi-industry process, are available to anyone on"
    ),
    (
        "The Digital Millennium Copyright Act of 1998, p. 9 (TITLE II: ONLINE COPYRIGHT "
        "INFRINGEMENT LIABILITY LIMITATION > Eligibility for Limitations Generally)"
    ),
)
DMCA_CONDUIT = SourceText(
    (
        "reasonable nondiscriminatory terms, and do not impose substantial costs or burdens\n"
        "on service providers.\n\nLimitation for Transitory Communications\n\nIn general "
        "terms, section 512(a) limits the liability of service providers in\ncircumstances "
        "where the provider merely acts as a data conduit, transmitting digital\ninformation "
        "from one point on a network to another at someone else’s request. This\nlimitation "
        "covers acts of transmission, routing, or providing connections for the\n"
        "information, as well as the intermediate and transient copies that are made "
        "automatically\nin the operation of a network.\n\nIn order to qualify for this "
        "limitation, the service provider’s activities must meet\n\nthe following "
        "conditions:\n\n!\n!\n\n!\n!\n\n!\n\nThe transmission must be initiated by a person "
        "other than the provider.\nThe transmission, routing, provision of connections, or "
        "copying must\nbe carried out by an automatic technical process without selection "
        "of\nmaterial by the service provider.\nThe service provider must not determine the "
        "recipients of the material.\nAny intermediate copies must not ordinarily be "
        "accessible to anyone\nother than anticipated recipients, and must not be retained "
        "for longer\nthan reasonably necessary.\nThe material must be transmitted with no "
        "modification to its content."
    ),
    (
        "The Digital Millennium Copyright Act of 1998, p. 10 (TITLE II: ONLINE COPYRIGHT "
        "INFRINGEMENT LIABILITY LIMITATION > Limitation for Transitory Communications)"
    ),
)
DMCA_EPHEMERAL = SourceText(
    (
        "arbitration panels convened under the law to set the royalty rates at\nfair market "
        "value.\n\nThis provision of the DMCA also creates a new statutory license for "
        "making\nephemeral recordings. As indicated above, section 402 of the DMCA amends "
        "section\n112 of the Copyright Act to permit the making of a single ephemeral "
        "recording to\nfacilitate the digital transmission of sound recording that is "
        "permitted either under the\nDPRA’s broadcasting exemption or statutory license. "
        "Transmitting organizations that\nwish to make more than the single ephemeral "
        "recording of a sound recording that is\npermitted under the outright exemption in "
        "section 112 are now eligible for a statutory\nlicense to make such additional "
        "ephemeral recordings. In addition, the new statutory\nlicense applies to the making "
        "of ephemeral recordings by transmitting organizations\nother than broadcasters who "
        "are exempt from the digital performance right, who are\nnot covered by the expanded "
        "exemption in section 402 of the DMCA."
    ),
    (
        "The Digital Millennium Copyright Act of 1998, p. 16 (Clarification of the Authority "
        "of the Copyright Office > Webcasting Amendments to the Digital Performance Right in "
        "Sound Recordings)"
    ),
)
DMCA_HULLS = SourceText(
    (
        "TITLE V: PROTECTION OF CERTAIN ORIGINAL DESIGNS\n\nTitle V of the DMCA, entitled "
        "the Vessel Hull Design Protection Act\n(VHDPA), adds a new chapter 13 to Title 17 "
        "of the U.S. Code. It creates a new system\nfor protecting original designs of "
        "certain useful articles that make the article attractive\nor distinctive in "
        "appearance. For purposes of the VHDPA, “useful articles” are limited\nto the hulls "
        "(including the decks) of vessels no longer than 200 feet.\n\nA design is protected "
        "under the VHDPA as soon as a useful article embodying\nthe design is made public or "
        "a registration for the design is published. Protection is lost\nif an application "
        "for registration is not made within two years after a design is first made\npublic, "
        "but a design is not registrable if it has been made public more than one year\n"
        "before the date of the application for registration. Once registered, protection\n"
        "continues for ten years from the date protection begins.\n\nThe VHDPA is subject to "
        "a legislative sunset: the Act expires two years from\nenactment (October 28, 2000). "
        "The Copyright Office is directed to conduct two joint\nstudies with the Patent and "
        "Trademark Office—the first by October 28, 1999 and the\nsecond by October 28, "
        "2000—evaluating the impact of the VHDPA."
    ),
    (
        "The Digital Millennium Copyright Act of 1998, p. 17 (TITLE V: PROTECTION OF CERTAIN "
        "ORIGINAL DESIGNS)"
    ),
)
DMCA_EFFECTIVE = SourceText(
    (
        "EFFECTIVE DATES\n\nMost provisions of the DMCA are effective on the date of "
        "enactment. There\nare, however, several exceptions. The technical amendments in "
        "Title I that relate to\neligibility of works for protection under U.S. copyright "
        "law by virtue of the new WIPO\ntreaties do not take effect until the relevant "
        "treaty comes into force. Similarly,\nrestoration of copyright protection for such "
        "works does not become effective until the\nrelevant treaty comes into force. The "
        "prohibition on the act of circumvention of access"
    ),
    "The Digital Millennium Copyright Act of 1998, p. 17 (EFFECTIVE DATES)",
)
RISCV_VARIADIC = SourceText(
    (
        "the integer calling convention is augmented by the hardware floating-point calling\n"
        "\nconvention.)\n\nIn the base integer calling convention, variadic arguments are "
        "passed in the same manner as\n\nnamed arguments, with one exception. Variadic "
        "arguments with 2×XLEN-bit alignment and size at\n\nmost 2×XLEN bits are passed in "
        "an aligned register pair (i.e., the first register in the pair is evennumbered), or "
        "on the stack by value if none is available. After a variadic argument has been "
        "passed\n\non the stack, all future arguments will also be passed on the stack (i.e. "
        "the last argument register\n\nmay be left unused due to the aligned register pair "
        "rule).\n\nValues are returned in the same manner as a first named argument of the "
        "same type would be\n\npassed. If such an argument would have been passed by "
        "reference, the caller allocates memory for\n\nthe return value, and passes the "
        "address as an implicit first parameter.\n\n\n\nThere is no requirement that the "
        "address be returned from the function and so\n\nsoftware should not assume that a0 "
        "will hold the address of the return value on\n\nreturn.\n\nThe stack grows "
        "downwards (towards lower addresses) and the stack pointer shall be aligned to a\n\n"
        "128-bit boundary upon procedure entry. The first argument passed on the stack is "
        "located at offset\n\nzero of the stack pointer on function entry; following "
        "arguments are stored at correspondingly\n\nhigher addresses."
    ),
    (
        "RISC-V ABIs Specification, p. 9 (PDF p. 12) (RISC-V Calling Conventions > Chapter "
        "2. Procedure Calling Convention > 2.1. Integer Calling Convention)"
    ),
)
RISCV_VA_LIST = SourceText(
    (
        "4.3. va_list, va_start, and va_arg\n\nThe va_list type is void*. A callee with "
        "variadic arguments is responsible for copying the contents\nof registers used to "
        "pass variadic arguments to the vararg save area, which must be contiguous with\n"
        "arguments passed on the stack. The va_start macro initializes its va_list argument "
        "to point to the\nstart of the vararg save area. The va_arg macro will increment its "
        "va_list argument according to the\nsize of the given type, taking into account the "
        'rules about 2×XLEN aligned arguments being passed\n\nin "aligned" register pairs.'
    ),
    (
        "RISC-V ABIs Specification, p. 15 (PDF p. 18) (RISC-V Calling Conventions > Chapter "
        "4. C/C++ type details > 4.3. va_list, va_start, and va_arg)"
    ),
)
#: Each document's passages: the background of a search in that document.
LIBRARY = {
    "Alice's Adventures in Wonderland": [
        RABBIT_HOLE,
        DRINK_ME,
        POOL_OF_TEARS,
        LITTLE_BILL,
        THICK_WOOD,
        CATERPILLAR,
        MUSHROOM,
        CHESHIRE_CAT,
        TRIAL,
        DREAM,
    ],
    "The Digital Millennium Copyright Act of 1998": [
        DMCA_INTRO,
        DMCA_TITLE_II,
        DMCA_ELIGIBILITY,
        DMCA_CONDUIT,
        DMCA_EPHEMERAL,
        DMCA_HULLS,
        DMCA_EFFECTIVE,
    ],
    "RISC-V ABIs Specification": [RISCV_VARIADIC, RISCV_VA_LIST],
}
#: (sentence, the passage it cites, whether that passage supports it)
CASES = [
    (
        "The White Rabbit took a watch out of its waistcoat-pocket, looked at it and hurried on.",
        RABBIT_HOLE,
        True,
    ),
    ("Alice had never before seen a rabbit with a waistcoat-pocket or a watch.", RABBIT_HOLE, True),
    ("Alice followed the Rabbit down a large rabbit-hole under the hedge.", RABBIT_HOLE, True),
    ("Burning with curiosity, she chased it across the field.", RABBIT_HOLE, True),
    ("The Caterpillar was exactly three inches high.", RABBIT_HOLE, False),
    (
        (
            "The Rabbit mistook Alice for his housemaid, Mary Ann, and sent her to fetch gloves "
            "and a fan."
        ),
        LITTLE_BILL,
        True,
    ),
    ("The Rabbit's house had a brass plate engraved with the name W. RABBIT.", LITTLE_BILL, True),
    ("The Rabbit took Alice for his cook, Mary Jane.", LITTLE_BILL, False),
    (
        "At the trial, the White Rabbit blew three blasts on the trumpet and read the accusation.",
        TRIAL,
        True,
    ),
    ("The Knave of Hearts was accused of stealing the tarts.", TRIAL, True),
    ("The first witness was the Hatter.", TRIAL, True),
    ("The White Rabbit blew five blasts on the trumpet.", TRIAL, False),
    ("The Rabbit mistook Alice for his housemaid.", TRIAL, False),
    (
        "Alice found she was about two feet high and shrinking because of the fan.",
        POOL_OF_TEARS,
        True,
    ),
    ("Alice grew to nine feet high after eating the cake.", POOL_OF_TEARS, False),
    ("The Caterpillar was exactly three inches high.", MUSHROOM, True),
    (
        (
            "The Caterpillar told her one side of the mushroom would make her grow taller and "
            "the other shorter."
        ),
        MUSHROOM,
        True,
    ),
    ("The Caterpillar was exactly four inches high.", MUSHROOM, False),
    ("The Caterpillar was smoking a long hookah on top of a mushroom.", THICK_WOOD, True),
    ("The Caterpillar was smoking a long hookah on top of a mushroom.", MUSHROOM, False),
    ("The Caterpillar asked Alice who she was.", CATERPILLAR, True),
    (
        (
            "Alice replied that she hardly knew, since she had changed several times since that "
            "morning."
        ),
        CATERPILLAR,
        True,
    ),
    (
        "The Cat told Alice that a Hatter and a March Hare lived nearby and that both were mad.",
        CHESHIRE_CAT,
        True,
    ),
    ("According to the Cat, everyone there is mad.", CHESHIRE_CAT, True),
    ("The Cat said the Duchess lives in that direction.", CHESHIRE_CAT, False),
    ("The King and Queen of Hearts sat on their throne.", CHESHIRE_CAT, False),
    ("Alice was tired of sitting by her sister on the bank.", DREAM, False),
    ("Alice was tired of sitting by her sister on the bank.", RABBIT_HOLE, True),
    ("In the end Alice woke up and told her sister about her curious dream.", DREAM, True),
    ("Alice drank from a bottle labelled DRINK ME.", DRINK_ME, True),
    ("Alice drank from a bottle labelled DRINK ME.", POOL_OF_TEARS, False),
    ("The DMCA was signed into law by President Clinton on October 28, 1998.", DMCA_INTRO, True),
    ("It implements two 1996 WIPO treaties.", DMCA_INTRO, True),
    ("The DMCA was signed by President Bush in 1999.", DMCA_INTRO, False),
    ("The Act is divided into five titles.", DMCA_INTRO, True),
    ("The DMCA implements two WIPO treaties.", DMCA_EFFECTIVE, False),
    ("Once registered, a vessel hull design is protected for ten years.", DMCA_HULLS, True),
    ("The VHDPA covers hulls of vessels no longer than 200 feet.", DMCA_HULLS, True),
    ("Protection of a hull design lasts 20 years from registration.", DMCA_HULLS, False),
    ("Title V protects the design of vessel hulls.", DMCA_INTRO, True),
    (
        (
            "To be eligible, a service provider must adopt a policy of terminating repeat "
            "infringers' accounts and accommodate standard technical measures."
        ),
        DMCA_ELIGIBILITY,
        True,
    ),
    (
        (
            "Providers have to cut off users who keep infringing and must not interfere with the "
            "technical measures copyright owners use."
        ),
        DMCA_ELIGIBILITY,
        True,
    ),
    ("Service providers must meet two overall conditions.", DMCA_CONDUIT, False),
    ("Service providers must meet two overall conditions.", DMCA_ELIGIBILITY, True),
    (
        "Title II creates four limitations on liability for online service providers.",
        DMCA_TITLE_II,
        True,
    ),
    (
        (
            "The limitations cover transitory communications, system caching, storage at users' "
            "direction and information location tools."
        ),
        DMCA_TITLE_II,
        True,
    ),
    (
        "Section 512(a) limits liability when the provider merely acts as a data conduit.",
        DMCA_CONDUIT,
        True,
    ),
    (
        "Section 512(a) limits liability when the provider merely acts as a data conduit.",
        DMCA_HULLS,
        False,
    ),
    (
        "The legislation makes ephemeral recordings subject to a new statutory license.",
        DMCA_EPHEMERAL,
        True,
    ),
    (
        "The legislation makes ephemeral recordings subject to a new statutory license.",
        DMCA_ELIGIBILITY,
        False,
    ),
    (
        (
            "Variadic arguments are passed like named arguments, except those with 2×XLEN-bit "
            "alignment, which go in an aligned register pair."
        ),
        RISCV_VARIADIC,
        True,
    ),
    (
        "The stack pointer must be aligned to a 128-bit boundary on procedure entry.",
        RISCV_VARIADIC,
        True,
    ),
    (
        "The stack pointer must be aligned to a 64-bit boundary on procedure entry.",
        RISCV_VARIADIC,
        False,
    ),
    ("The va_list type is void*.", RISCV_VA_LIST, True),
    ("The va_list type is void*.", RISCV_VARIADIC, False),
    ("The stack grows downwards, towards lower addresses.", RISCV_VARIADIC, True),
    ("The stack grows downwards, towards lower addresses.", RISCV_VA_LIST, False),
    (
        "A callee with variadic arguments copies the argument registers to the vararg save area.",
        RISCV_VA_LIST,
        True,
    ),
    (
        "A callee with variadic arguments copies the argument registers to the vararg save area.",
        DMCA_CONDUIT,
        False,
    ),
    (
        "Copies made automatically in the operation of a network are covered too.",
        DMCA_CONDUIT,
        True,
    ),
    ("The service provider must not pick the recipients of the material.", DMCA_CONDUIT, True),
    ("The service provider must not pick the recipients of the material.", RABBIT_HOLE, False),
    ("A rabbit in a waistcoat pulled out a pocket watch and checked the time.", RABBIT_HOLE, True),
    ("She was shrinking quickly because of the fan she held.", POOL_OF_TEARS, True),
    ("The DMCA became law in late 1998.", DMCA_INTRO, True),
    (
        "Online intermediaries get protection from liability when they only pass data along.",
        DMCA_CONDUIT,
        True,
    ),
    (
        "Online intermediaries get protection from liability when they only pass data along.",
        DMCA_EPHEMERAL,
        False,
    ),
    (
        "The law shields providers that simply relay information between network points.",
        DMCA_CONDUIT,
        True,
    ),
    (
        "The law shields providers that simply relay information between network points.",
        DMCA_HULLS,
        False,
    ),
    (
        (
            "Hull designs lose protection if registration is not sought within two years of "
            "publication."
        ),
        DMCA_HULLS,
        True,
    ),
    (
        (
            "Hull designs lose protection if registration is not sought within two years of "
            "publication."
        ),
        DMCA_INTRO,
        False,
    ),
    ("The Caterpillar grew angry because it was itself only three inches tall.", MUSHROOM, True),
    (
        (
            "When a value is returned by reference, the caller passes the address of the memory "
            "as a hidden first argument."
        ),
        RISCV_VARIADIC,
        True,
    ),
    (
        (
            "When a value is returned by reference, the caller passes the address of the memory "
            "as a hidden first argument."
        ),
        RISCV_VA_LIST,
        False,
    ),
    ("Everyone in that place is insane, the Cat claimed.", CHESHIRE_CAT, True),
    ("Everyone in that place is insane, the Cat claimed.", CATERPILLAR, False),
    ("Alice worried that she kept changing size.", CATERPILLAR, True),
    ("Alice worried that she kept changing size.", TRIAL, False),
    ("The monarchs sat on their throne while a crowd of animals gathered.", TRIAL, True),
    ("The monarchs sat on their throne while a crowd of animals gathered.", LITTLE_BILL, False),
]
