"""The models Quire downloads. ``hub.py``: what they are, where they go, what is installed;
``pull.py``: fetch from the Hugging Face Hub (``fetch.py``), convert to int8 ONNX when needed
(``plan.py`` decides, ``convert.py`` does it), check, install in one rename."""
