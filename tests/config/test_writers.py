"""`[writers]` and `[forem] organization` in toolkit.toml: read, checked, documented."""

from __future__ import annotations

import pytest

from toolkit.config import load_config
from toolkit.config.writers import writer_variable
from toolkit.content.accounts import account_of
from toolkit.errors import ConfigError


def revealed(account) -> str:
    """An account's key, revealed (one is set)."""
    assert account.key is not None
    return str(account.key.reveal())


@pytest.mark.parametrize(
    ("folder", "variable"),
    [
        ("jane-doe", "FOREM_API_KEY_JANE_DOE"),
        ("Bob.Smith", "FOREM_API_KEY_BOB_SMITH"),
        ("zoë", "FOREM_API_KEY_ZO_"),
        ("x1", "FOREM_API_KEY_X1"),
    ],
)
def test_a_writers_default_variable(folder, variable):
    assert writer_variable(folder) == variable


def test_posts_map_to_their_writers_account_and_key(tmp_path):
    (tmp_path / "toolkit.toml").write_text(
        '[site]\ncontent_dir = "posts"\n\n[writers]\nomar = "DEVTO_KEY_OMAR"\n', encoding="utf-8"
    )
    env = {"FOREM_API_KEY_JANE_DOE": "k-jane", "DEVTO_KEY_OMAR": "k-omar", "FOREM_API_KEY": "k"}
    config = load_config(tmp_path / "toolkit.toml", env=env)

    jane = account_of(config, "posts/jane-doe/hello.md")
    assert (jane.writer, jane.variable, revealed(jane)) == (
        "jane-doe",
        "FOREM_API_KEY_JANE_DOE",
        "k-jane",
    )
    omar = account_of(config, tmp_path / "posts" / "omar" / "deep" / "x.md")
    assert (omar.writer, omar.variable, revealed(omar)) == ("omar", "DEVTO_KEY_OMAR", "k-omar")
    lin = account_of(config, "posts/lin/x.md")
    assert (lin.variable, lin.key) == ("FOREM_API_KEY_LIN", None)
    outside = account_of(config, "posts/news.md")
    assert (outside.writer, outside.variable, revealed(outside)) == (None, "FOREM_API_KEY", "k")
    assert account_of(config, "posts/_mirror/x.md").writer is None
    assert account_of(config, "posts/assets/x.md").writer is None  # never a writer's folder
    assert account_of(config, "posts/2023/x.md").writer is None  # a year


def test_an_empty_writers_section_makes_a_team_and_its_absence_does_not(tmp_path):
    path = tmp_path / "toolkit.toml"
    path.write_text("[writers]\n", encoding="utf-8")
    assert load_config(path, env={}).writers is not None
    path.write_text("[site]\n", encoding="utf-8")
    config = load_config(path, env={"FOREM_API_KEY_JANE": "k"})
    assert config.writers is None
    assert account_of(config, "content/jane/x.md").variable == "FOREM_API_KEY"


def test_wrong_writers_entries_are_named(tmp_path):
    path = tmp_path / "toolkit.toml"
    path.write_text(
        '[writers]\n"../up" = "A"\nbob = "1x"\nann = 3\nkim = "FOREM_API_KEY"\n_mirror = "X"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    problems = caught.value.problems
    assert (
        "toolkit.toml: writers.../up: a writer is one folder name under the posts folder"
        in problems
    )
    assert (
        'toolkit.toml: writers.bob: must be the name of an environment variable, e.g. "FOREM_API_KEY_BOB"'
        in problems
    )
    assert any(p.startswith("toolkit.toml: writers.ann: must be the name") for p in problems)
    assert (
        "toolkit.toml: writers._mirror: a writer is one folder name under the posts folder"
        in problems
    )
    assert any(
        p.startswith("toolkit.toml: writers.kim: FOREM_API_KEY is the key of the posts outside")
        for p in problems
    )


def test_organization_wins_over_organization_id_with_a_warning(tmp_path):
    path = tmp_path / "toolkit.toml"
    path.write_text('[forem]\norganization = "acme"\norganization_id = 3\n', encoding="utf-8")
    config = load_config(path, env={})
    assert config.forem.organization_ref == "acme"
    assert config.warnings == (
        "toolkit.toml: forem.organization_id is ignored: forem.organization is set (it takes "
        "a username or an id; keep one of the two)",
    )


@pytest.mark.parametrize("value", ['"acme"', "7"])
def test_organization_takes_a_username_or_an_id(tmp_path, value):
    path = tmp_path / "toolkit.toml"
    path.write_text(f"[forem]\norganization = {value}\n", encoding="utf-8")
    assert load_config(path, env={}).forem.organization_ref == (7 if value == "7" else "acme")


@pytest.mark.parametrize("value", ['"a b"', "0", "true", '""'])
def test_organization_refuses_what_names_no_organisation(tmp_path, value):
    path = tmp_path / "toolkit.toml"
    path.write_text(f"[forem]\norganization = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"forem\.organization: must be"):
        load_config(path, env={})


def test_config_all_documents_the_writers_table(project):
    result = project.run("config", "--all")
    assert result.exit_code == 0
    assert "# [writers]" in result.output
    assert '# jane-doe = "FOREM_API_KEY_JANE_DOE"' in result.output
    assert '# organization = "acme"' in result.output


def test_config_lists_each_writers_variable_and_whether_it_is_set(make_project):
    project = make_project(
        '[site]\ntitle = "Team"\n\n[writers]\nomar = "DEVTO_KEY_OMAR"\n', name="team"
    )
    for folder in ("jane-doe", "omar", "assets"):
        project.write(f"content/{folder}/a-{folder}.md", "---\ntitle: A\n---\nText.\n")

    result = project.run("config", env={"DEVTO_KEY_OMAR": "k"})

    assert result.exit_code == 0, result.output
    assert "writers.jane-doe: not set  (secret: FOREM_API_KEY_JANE_DOE in the environment" in (
        result.output
    )
    assert "writers.omar: set  (secret: DEVTO_KEY_OMAR in the environment" in result.output
    assert "writers.assets" not in result.output and "\nk" not in result.output
    plain = make_project('[site]\ntitle = "One"\n', name="one").run("config")
    assert "writers." not in plain.output
