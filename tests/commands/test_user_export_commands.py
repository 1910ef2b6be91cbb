"""``manage.py export_user`` and ``import_user``: the one-file export from the command line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.models import EndUser, Message
from memories.services.history import user_forget

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_to_a_file_then_import_it_back(alice_memory, exported, tmp_path):
    path = tmp_path / "alice.json"
    first = exported()

    out, _ = run("export_user", "alice", "--out", str(path))
    assert f"to {path}" in out
    user_forget(user_external_id="alice")
    out, _ = run("import_user", str(path))

    assert "Imported alice: 3 sessions, 6 messages, 3 summaries" in out
    again = exported()
    assert {k: v for k, v in again.items() if k != "exported_at"} == {
        k: v for k, v in first.items() if k != "exported_at"
    }


def test_export_to_standard_output(alice_memory, exported):
    out, _ = run("export_user", "alice")

    assert json.loads(out)["messages"] == exported()["messages"]


def test_an_existing_user_is_refused_without_merge(alice_memory, tmp_path):
    path = tmp_path / "alice.json"
    run("export_user", "alice", "--out", str(path))
    messages = Message.objects.count()

    with pytest.raises(CommandError, match="nothing imported: .*already exists here"):
        run("import_user", str(path))
    assert Message.objects.count() == messages

    out, _ = run("import_user", str(path), "--merge")
    assert "already there and kept: 3 sessions, 2 messages, 3 summaries, 2 diaries" in out


def test_a_bad_version_is_refused_with_nothing_written(alice_memory, exported, tmp_path):
    document = exported()
    document["version"] = 99
    document["user"]["id"] = "newcomer"
    path = tmp_path / "v99.json"
    path.write_text(json.dumps(document))

    with pytest.raises(CommandError, match="Version 99 cannot be read here"):
        run("import_user", str(path))
    assert not EndUser.objects.filter(external_id="newcomer").exists()


def test_errors_name_what_to_fix(db, tmp_path):
    with pytest.raises(CommandError, match="No end user 'nobody'"):
        run("export_user", "nobody")
    with pytest.raises(CommandError, match="No such file"):
        run("import_user", str(tmp_path / "missing.json"))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(CommandError, match="is one JSON object"):
        run("import_user", str(tmp_path / "list.json"))
