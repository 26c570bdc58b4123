from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from toolkit.config import Secret, load_config
from toolkit.config.sections import SECTIONS, declared_keys
from toolkit.errors import ConfigError


def test_defaults_and_paths_relative_to_the_file(tmp_path):
    (tmp_path / "toolkit.toml").write_text('[site]\ntitle = "T"\ncontent_dir = "posts"\n')
    config = load_config(tmp_path / "toolkit.toml", env={})
    assert config.site.content_dir == tmp_path / "posts"
    assert config.site.output_dir == tmp_path / "site"
    assert config.forem.base_url == "https://dev.to"
    assert config.forem.api_key is None


def test_every_problem_is_reported_at_once(tmp_path):
    (tmp_path / "toolkit.toml").write_text(
        '[site]\nurl = "ftp://x"\ncolour = 1\n[forem]\nbase_url = "https://dev.to/api"\n'
        "[mcp]\nport = 70000\n[nope]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "toolkit.toml", env={})
    assert caught.value.problems == [
        "toolkit.toml: nope: unknown section",
        "toolkit.toml: site.colour: unknown key",
        "toolkit.toml: site.url: must be an absolute http(s) URL, not 'ftp://x'",
        "toolkit.toml: forem.base_url: must not include the /api prefix (toolkit adds it)",
        "toolkit.toml: mcp.port: must be a port number between 1 and 65535",
    ]


def test_invalid_toml_names_the_file(tmp_path):
    (tmp_path / "toolkit.toml").write_text("[site\n")
    with pytest.raises(ConfigError, match=r"toolkit.toml: not valid TOML"):
        load_config(tmp_path / "toolkit.toml", env={})


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "toolkit.toml", env={})


def test_environment_overrides_base_url_and_supplies_secrets(tmp_path):
    (tmp_path / "toolkit.toml").write_text("")
    (tmp_path / ".env").write_text("FOREM_API_KEY=from-dotenv\nLOGS_PASSWORD=pw\n")
    config = load_config(
        tmp_path / "toolkit.toml",
        env={"FOREM_BASE_URL": "http://127.0.0.1:8787/", "FOREM_API_KEY": "from-env"},
    )
    assert config.forem.base_url == "http://127.0.0.1:8787"
    assert config.forem.api_key == Secret("from-env")  # the real environment wins over .env
    assert config.logs.password is not None and config.logs.password.reveal() == "pw"


def test_bad_environment_override_is_reported(tmp_path):
    (tmp_path / "toolkit.toml").write_text("")
    with pytest.raises(ConfigError, match="FOREM_BASE_URL: must be an absolute http"):
        load_config(tmp_path / "toolkit.toml", env={"FOREM_BASE_URL": "localhost:8787"})


def test_secrets_never_show_themselves():
    secret = Secret("s3cr3t-value")
    assert "s3cr3t" not in repr(secret) and "s3cr3t" not in str(secret)
    assert "s3cr3t" not in f"{secret}"


def test_cli_reports_config_problems_one_per_line(project):
    (project.root / "toolkit.toml").write_text("[site]\nurl = 3\nbogus = true\n")
    result = project.run("check")
    assert result.exit_code == 1
    assert "Error: toolkit.toml: site.bogus: unknown key" in result.output
    assert "Error: toolkit.toml: site.url: must be a string" in result.output
    assert "Traceback" not in result.output


def test_a_dotenv_that_is_not_utf8_is_a_one_line_error(project):
    env = project.root / ".env"
    env.write_bytes(b"LOGS_USERNAME=me\nFOREM_API_KEY=caf\xe9\n")
    env.chmod(0o600)
    result = project.run("check")
    assert result.exit_code == 1
    assert result.output.strip() == "Error: .env: not valid UTF-8 text (line 2)"


def test_a_dotenv_open_to_other_users_is_warned_about_once(project):
    env = project.root / ".env"
    env.write_text("FOREM_API_KEY=from-dotenv\n")
    env.chmod(0o644)
    project.post("hello", "Hello")
    result = project.run("check")
    assert result.exit_code == 0
    warning = "Warning: .env is readable by other users (mode 644); chmod 600 .env"
    assert result.stderr.splitlines()[0] == warning
    assert result.stderr.count(warning) == 1 and warning not in result.stdout

    env.chmod(0o620)  # group-writable only: another user can swap the keys or base URLs
    assert project.run("check").stderr.splitlines()[0] == (
        "Warning: .env is writable by other users (mode 620); chmod 600 .env"
    )

    env.chmod(0o600)
    assert ".env" not in project.run("check").stderr
    env.chmod(0o644)
    assert ".env" not in project.run("-q", "check").output  # -q: only errors


def test_the_core_reports_dotenv_warnings_without_printing(tmp_path, capsys):
    (tmp_path / "toolkit.toml").write_text("")
    (tmp_path / ".env").write_text("FOREM_API_KEY=k\n")
    (tmp_path / ".env").chmod(0o604)
    config = load_config(tmp_path / "toolkit.toml", env={})
    assert config.warnings == (".env is readable by other users (mode 604); chmod 600 .env",)
    assert capsys.readouterr() == ("", "")
    (tmp_path / ".env").chmod(0o600)
    assert load_config(tmp_path / "toolkit.toml", env={}).warnings == ()


# -- each key declared once, listed and documented from that declaration ------------------

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def every_key() -> list[str]:
    """Every key of every section, read from the section dataclasses themselves."""
    return [f"{name}.{item.name}" for name, cls in SECTIONS.items() for item in fields(cls)]


def readme_config_rows(readme: str) -> dict[str, str]:
    """The rows of the README's configuration table, by key."""
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    return {
        match[1]: match[0]
        for match in re.finditer(r"^\| `([a-z_]+\.[a-z_]+)` \|.*$", section, re.MULTILINE)
    }


def test_every_field_of_every_section_is_a_declared_key():
    assert set(SECTIONS) == {
        "site",
        "content",
        "source",
        "forem",
        "archive",
        "license",
        "logs",
        "mcp",
    }
    for _section, _key, declared in declared_keys():
        assert declared.help and declared.rule.kind
        assert not declared.secret or declared.env  # a secret comes from its variable only


def test_toolkit_config_lists_every_key_with_its_value(project):
    (project.root / ".env").write_text("LOGS_PASSWORD=hunter2-password\n")
    (project.root / ".env").chmod(0o600)
    env = {"FOREM_BASE_URL": "http://user:pa55word@127.0.0.1:8787"}
    listed = json.loads(project.run("config", "--json", env=env).stdout)
    assert [k["name"] for k in listed] == every_key()
    by_name = {k["name"]: k for k in listed}
    assert by_name["forem.base_url"]["value"] == "http://***@127.0.0.1:8787"
    assert by_name["forem.base_url"]["origin"] == "FOREM_BASE_URL"
    assert by_name["forem.base_url"]["env"] == "FOREM_BASE_URL"
    assert (
        by_name["logs.password"]["value"] == "set"
        and by_name["forem.api_key"]["value"] == "not set"
    )
    assert by_name["site.content_dir"] == {
        **by_name["site.content_dir"],
        "value": "content",
        "default": "content",
        "origin": "default",
    }
    assert by_name["site.url"]["origin"] == "toolkit.toml"
    assert by_name["site.assets_base_url"]["value"] is None  # [site] url alone hosts nothing
    text = project.run("config", env=env).output
    for name in every_key():
        assert f"\n{name} " in f"\n{text}" or f"\n{name}:" in f"\n{text}", name
    for output in (text, json.dumps(listed)):
        assert "pa55word" not in output and "hunter2" not in output


def test_every_key_is_documented_in_the_readme():
    rows = readme_config_rows(README)
    assert set(rows) == set(every_key()), "README.md's configuration table and the keys differ"
    for section, key, declared in declared_keys():
        name = f"{section}.{key}"
        _, default, variable, _ = (cell.strip() for cell in rows[name].strip("|").split("|", 3))
        if declared.default_from:
            assert default == f"`{section}.{declared.default_from}`", name
        elif declared.default is None:
            assert default == "", name
        else:
            assert default == f"`{json.dumps(declared.default)}`", name
        assert variable == (
            f"`{declared.env}`" + (" (secret)" if declared.secret else "") if declared.env else ""
        ), name


def test_the_readme_check_fails_for_an_undocumented_key():
    rows = readme_config_rows(README)
    without = README.replace(rows["forem.timeout"] + "\n", "")
    assert set(readme_config_rows(without)) == set(every_key()) - {"forem.timeout"}


def test_a_secret_in_the_file_is_refused(tmp_path):
    (tmp_path / "toolkit.toml").write_text('[forem]\napi_key = "oops"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "toolkit.toml", env={})
    assert caught.value.problems == [
        "toolkit.toml: forem.api_key: a secret is never kept in toolkit.toml; "
        "set FOREM_API_KEY in the environment or in .env"
    ]
    assert "oops" not in caught.value.message


def test_the_projects_folders_never_lead_out_of_it(tmp_path):
    """issue 43, 2: a folder the project names (by default or in toolkit.toml) that is a
    symlink to elsewhere is refused, each in one line; the posts' folder must be in the
    project, so that toolkit.lock names every post by a relative path."""
    blog, elsewhere = tmp_path / "blog", tmp_path / "elsewhere"
    blog.mkdir()
    elsewhere.mkdir()
    for name in ("content", "site", "templates"):
        (blog / name).symlink_to(elsewhere)
    (blog / "toolkit.toml").write_text('[site]\ntitle = "T"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(blog / "toolkit.toml")
    lines = [line.split(":")[1].strip() for line in refused.value.problems]
    assert lines == ["site.content_dir", "site.templates_dir", "site.output_dir"]
    assert all("leads out of the project through a symlink" in p for p in refused.value.problems)
    # Named outright, elsewhere: the writer's choice, but for the posts' folder.
    (blog / "toolkit.toml").write_text(
        f'[site]\ntitle = "T"\ncontent_dir = "../elsewhere"\ntemplates_dir = "{elsewhere}"\n'
        f'output_dir = "{elsewhere}"\n'
    )
    with pytest.raises(ConfigError) as outside:
        load_config(blog / "toolkit.toml")
    assert outside.value.problems == [
        "toolkit.toml: site.content_dir: must be a folder in the project (toolkit.lock names "
        "each post by its path there), not '../elsewhere'"
    ]
