"""Dependencies: routes get settings and resources from the lifespan state through these."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from quire.config import Settings
from quire.storage.db import Database


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_db(request: Request) -> Database:
    db: Database = request.state.db
    return db


SettingsDep = Annotated[Settings, Depends(get_settings)]
DbDep = Annotated[Database, Depends(get_db)]
