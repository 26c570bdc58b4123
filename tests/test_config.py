from __future__ import annotations

import pytest

from toolkit.config import Secret, load_config
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
        "[site]\nurl = \"ftp://x\"\ncolour = 1\n[forem]\nbase_url = \"https://dev.to/api\"\n"
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
    assert config.logs.password.reveal() == "pw"


def test_bad_environment_override_is_reported(tmp_path):
    (tmp_path / "toolkit.toml").write_text("")
    with pytest.raises(ConfigError, match="FOREM_BASE_URL: must be an absolute http"):
        load_config(tmp_path / "toolkit.toml", env={"FOREM_BASE_URL": "localhost:8787"})


def test_secrets_never_show_themselves():
    secret = Secret("s3cr3t-value")
    assert "s3cr3t" not in repr(secret) and "s3cr3t" not in str(secret)
    assert "s3cr3t" not in f"{secret}"


def test_cli_reports_config_problems_one_per_line(project):
    (project.root / "toolkit.toml").write_text('[site]\nurl = 3\nbogus = true\n')
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
