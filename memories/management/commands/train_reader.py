"""``manage.py train_reader``: train the reader's heads on its examples and write ``heads.npz``.

A development command (it needs scikit-learn, a development requirement); the service only loads
the file it writes. See ``memories.llm.reader.training``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memories.llm import get_embedder
from memories.llm.reader.heads import HEADS_FILE
from memories.llm.reader.training import train_heads

_MSC_PATH = Path(settings.BASE_DIR).parent / "shared" / "data" / "msc" / "msc_personas_train.json"


class Command(BaseCommand):
    help = (
        "Train the reader's classifiers (fact, kind, change, dialogue act) on memories/llm/reader/examples/ "
        "and MSC persona statements, with the configured embedding model; writes memories/llm/reader/heads.npz."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--msc", type=Path, default=_MSC_PATH, help=f"MSC persona file (default: {_MSC_PATH}).")
        parser.add_argument("--out", type=Path, default=HEADS_FILE, help=f"Where to write (default: {HEADS_FILE}).")
        parser.add_argument("--cv", action="store_true", help="Pick each head's regularisation by cross-validation.")

    def handle(self, *args: object, msc: Path, out: Path, cv: bool, **options: object) -> None:
        if not msc.is_file():
            raise CommandError(
                f"No MSC persona file at {msc}: pass --msc PATH (../shared/data/msc/ beside the checkout)."
            )
        try:
            import sklearn  # noqa: F401
        except ImportError as exc:
            raise CommandError("Training needs scikit-learn: install requirements-model.txt.") from exc
        embedder = get_embedder()
        try:
            train_heads(
                embed=lambda texts: np.asarray(embedder.embed(texts).vectors, dtype=np.float32),
                model_name=embedder.model_name,
                msc_path=msc,
                out=out,
                cross_validate=cv,
                report=self.stdout.write,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
