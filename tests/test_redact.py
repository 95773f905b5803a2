from __future__ import annotations

from pathlib import Path

import pytest

from szrag.base.redact import (
    KINDS,
    Redaction,
    is_config_path,
    is_secret_name,
    looks_random,
    marker,
    redact,
    redact_text,
)

PEM_BODY = "MIIEowIBAAKCAQEAfakeFAKEfake0123456789\nFAKEfakeFAKEfake0123456789abcdefABCDEF"
RSA_BLOCK = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"

# (text, the secret inside it, the kind it is redacted as)
SECRETS: list[tuple[str, str, str]] = [
    (
        'bot = "xoxb-2048-4096-FAKEfakeFAKEfake1234"',
        "xoxb-2048-4096-FAKEfakeFAKEfake1234",
        "slack_token",
    ),
    ("xoxp-1111-2222-3333-fakefakefake", "xoxp-1111-2222-3333-fakefakefake", "slack_token"),
    ("app xapp-1-A0FAKE00-1234-fakefake0123", "xapp-1-A0FAKE00-1234-fakefake0123", "slack_token"),
    (
        "post to https://hooks.slack.com/services/TFAKE000/BFAKE000/fakeFAKEfake0000 now",
        "https://hooks.slack.com/services/TFAKE000/BFAKE000/fakeFAKEfake0000",
        "slack_webhook",
    ),
    (
        "gh = ghp_FAKEfake0123456789FAKEfake0123456789",
        "ghp_FAKEfake0123456789FAKEfake0123456789",
        "github_token",
    ),
    (
        "gho_FAKEfake0123456789FAKEfake0123456789",
        "gho_FAKEfake0123456789FAKEfake0123456789",
        "github_token",
    ),
    (
        "github_pat_11FAKE0000_fakeFAKEfake0123456789abcdef",
        "github_pat_11FAKE0000_fakeFAKEfake0123456789abcdef",
        "github_token",
    ),
    ("key sk-FAKEfake0123456789FAKEfake", "sk-FAKEfake0123456789FAKEfake", "openai_key"),
    ("sk-proj-FAKEfake0123456789FAKEfake_x", "sk-proj-FAKEfake0123456789FAKEfake_x", "openai_key"),
    (
        "sk-ant-api03-FAKEfake0123456789FAKEfake",
        "sk-ant-api03-FAKEfake0123456789FAKEfake",
        "anthropic_key",
    ),
    ("id AKIAFAKE0123456789AB here", "AKIAFAKE0123456789AB", "aws_access_key_id"),
    ("ASIAFAKE0123456789AB", "ASIAFAKE0123456789AB", "aws_access_key_id"),
    (
        "aws_secret_access_key = FAKEfake0123456789FAKEfake0123456789FAKE",
        "FAKEfake0123456789FAKEfake0123456789FAKE",
        "aws_secret_access_key",
    ),
    (
        '"AWS_SECRET_ACCESS_KEY": "FAKE/ake0123456789FAKEfake0123456789+AKE"',
        "FAKE/ake0123456789FAKEfake0123456789+AKE",
        "aws_secret_access_key",
    ),
    (
        "maps AIzaFAKEfake0123456789FAKEfake012345678 ok",
        "AIzaFAKEfake0123456789FAKEfake012345678",
        "google_api_key",
    ),
    ("sk_live_FAKEfake0123456789", "sk_live_FAKEfake0123456789", "stripe_key"),
    ("rk_test_FAKEfake0123456789", "rk_test_FAKEfake0123456789", "stripe_key"),
    ("whsec_FAKEfake0123456789FAKEfake", "whsec_FAKEfake0123456789FAKEfake", "stripe_key"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.FAKEfakeSignature0123",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.FAKEfakeSignature0123",
        "jwt",
    ),
    ("Authorization: Bearer FAKEfake0123456789token", "FAKEfake0123456789token", "bearer_token"),
    ("curl -H 'bearer abcdef0123456789abcdef'", "abcdef0123456789abcdef", "bearer_token"),
    ("postgres://app:FakePass123@db:5432/app", "FakePass123", "url_password"),
    (RSA_BLOCK, PEM_BODY.splitlines()[0], "private_key"),
    # values assigned to secret-named keys, in code and configuration forms
    ('PASSWORD = "correct horse"', "correct horse", "secret_value"),
    ("db_password = 'hunter2'", "hunter2", "secret_value"),
    ('const apiKey = "plain-api-key"', "plain-api-key", "secret_value"),
    ('{"client_secret": "plain-client-secret"}', "plain-client-secret", "secret_value"),
    ("{ api_key: `plain-template-free` }", "plain-template-free", "secret_value"),
    ('connect(password="kwarg-secret")', "kwarg-secret", "secret_value"),
    ('password: str = "annotated-secret"', "annotated-secret", "secret_value"),
    ('token := "go-style-secret"', "go-style-secret", "secret_value"),
    ("'private_key' => 'php-style-secret'", "php-style-secret", "secret_value"),
    ("x-api-key: header-secret-value", "header-secret-value", "secret_value"),
    ("database:\n  password: s3cr3t-yaml", "s3cr3t-yaml", "secret_value"),
    ("- token: list-item-secret", "list-item-secret", "secret_value"),
    ("DB_PASSWORD=hunter2", "hunter2", "secret_value"),
    ("export SECRET_TOKEN=env-token-value", "env-token-value", "secret_value"),
    ("SLACK_SIGNING_SECRET=abc123def456", "abc123def456", "secret_value"),
    ("access_key = 'plain-access-key'", "plain-access-key", "secret_value"),
    ('auth = "user:pass"', "user:pass", "secret_value"),
    ("passwd: 'x9'", "x9", "secret_value"),
    ("DB_PASS=s3cr3t-Passw0rd!", "s3cr3t-Passw0rd!", "secret_value"),
    # names ending in "key" hold a secret when the value looks generated
    (
        "ENCRYPTION_KEY=9f8e7d6c5b4a39281716f5e4d3c2b1a0",
        "9f8e7d6c5b4a39281716f5e4d3c2b1a0",
        "secret_value",
    ),
    (
        'MAILGUN_KEY = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"',
        "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
        "secret_value",
    ),
    (
        "session_key: 5ebe2294ecd0e0f08eab7690d2a6ee69",
        "5ebe2294ecd0e0f08eab7690d2a6ee69",
        "secret_value",
    ),
    ("API_KEY = abcdEF1234ghij5678kl", "abcdEF1234ghij5678kl", "secret_value"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "basic_auth"),
    ("[database]\npassword = hunter2", "hunter2", "secret_value"),
    # shapes an adversarial run found reaching the model
    ('REDIS_URL = "redis://:FAKEpw0rd@cache:6379/0"', "FAKEpw0rd", "url_password"),
    (
        'var cs = "Server=db;User Id=sa;Password=FAKE!dotnet9;Database=app;";',
        "FAKE!dotnet9",
        "connection_string_password",
    ),
    ('{"x-api-credential": "c2VjcmV0LXZhbHVl"}', "c2VjcmV0LXZhbHVl", "secret_value"),
    (
        "mail = SG.FAKEfake0123456789FAKEfa.FAKEfake0123456789FAKEfake0123456789FAKEfak",
        "SG.FAKEfake0123456789FAKEfa",
        "sendgrid_key",
    ),
    ('{"privateKeyPem": "MIIFAKEpemBody0123456789"}', "MIIFAKEpemBody0123456789", "secret_value"),
    ("Run `curl -u admin:FAKEcurl99 https://x.test/`", "FAKEcurl99", "curl_password"),
    ("curl --user=admin:FAKEcurl98 https://x.test/", "FAKEcurl98", "curl_password"),
    ("// the deploy token: FAKEtok3n9 (rotate)", "FAKEtok3n9", "secret_value"),
    ("# api_key = FAKEkey12345 for staging", "FAKEkey12345", "secret_value"),
    ("[deploy]\ntoken = FakePascalValue", "FakePascalValue", "secret_value"),
    ("credentials:\n  value: FAKEnested77\n", "FAKEnested77", "secret_value"),
    ("app:\n  credentials:\n    value: FAKEdeeper77\n", "FAKEdeeper77", "secret_value"),
    # the shapes of detect-secrets' and gitleaks' rule sets
    (
        "login(token=hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake01)",
        "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake01",
        "huggingface_token",
    ),
    ("clone with glpat-FAKEfake0123456789ab", "glpat-FAKEfake0123456789ab", "gitlab_token"),
    (
        "twilio key SK0123456789abcdef0123456789abcdef here",
        "SK0123456789abcdef0123456789abcdef",
        "twilio_key",
    ),
    (
        "client.run('MTIzNDU2Nzg5MDEyMzQ1Njc4OTA.GaBcDe.FAKEfakeFAKEfakeFAKEfake012')",
        "MTIzNDU2Nzg5MDEyMzQ1Njc4OTA.GaBcDe.FAKEfakeFAKEfakeFAKEfake012",
        "discord_token",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=fake;AccountKey=FAKEfake0123456789FAKEfake"
        "0123456789FAKEfake0123==;EndpointSuffix=core.windows.net",
        "FAKEfake0123456789FAKEfake0123456789FAKEfake0123==",
        "azure_key",
    ),
    (
        "<settings>\n  <password>FAKExmlPass</password>\n</settings>",
        "FAKExmlPass",
        "secret_value",
    ),
    ("<db:adminPassword>FAKExml2</db:adminPassword>", "FAKExml2", "secret_value"),
    ("export PGPASSWORD=FAKEpgPass1", "FAKEpgPass1", "secret_value"),
    ("export PGPASSWORD='FAKE pg pass'", "FAKE pg pass", "secret_value"),
    ("The admin password is Tr0ub4dor&3 so be careful.", "Tr0ub4dor&3", "secret_value"),
    ("the root password was `FAKEroot99`.", "FAKEroot99", "secret_value"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS)
def test_each_secret_is_replaced_by_a_marker_of_its_kind(text: str, secret: str, kind: str) -> None:
    result = redact_text(text)
    assert secret not in result.text
    assert marker(kind) in result.text
    assert result.count == 1
    assert result.kinds == (kind,)


# Ordinary code and prose: nothing here is a secret.
ORDINARY = [
    "# token: see the docs",
    "// the password: field of the form",
    "curl -u $USER:$PASS https://example.test/",
    "credentials:\n  - name: default\n",
    "private_key_id: int",
    "token = tokens(question)",
    "    token = tokens(question)",
    "password_field = form.password",
    "password = form.password",
    "const password = request.body.password;",
    "token: str",
    "    password: Optional[str] = None",
    "api_key: str | None = None",
    "def login(password: str) -> bool:",
    "auth: AuthConfig",
    "password = fallback_password",
    "    password=db_password",
    'if token == "expected":',
    "if (password === '') return",
    'password = ""',
    "const url = `Bearer ${process.env.AI_API_KEY}`",
    'headers = {"Authorization": f"Bearer {key}"}',
    'token = "${SLACK_BOT_TOKEN}"',
    "password: {{ vault_password }}",
    "PASSWORD=$(cat /run/secrets/db)",
    "AI_API_KEY=",
    "- token: the access token the client sends",
    "token_type = 'bearer'",
    "max_tokens = 4000",
    "secret_name = 'prod/db'",
    "  auth:",
    '  "auth": {',
    "password: null",
    "token: true",
    "{ token: token }",
    "  token: token,",
    "the bearer of responsibilities",
    'if pem.startswith("-----BEGIN PRIVATE KEY-----"):',
    'END = "-----END PRIVATE KEY-----"',
    "sk-loading-placeholder-big",
    "git@github.com:org/repo.git",
    "https://example.org/path?token",
    "https://user@example.org/",
    "skeleton_key = build()",
    'cache_key = "user-profile-settings-v2"',
    'primary_key = "id"',
    "sort_key: created_at",
    "SORT_KEY=created_at_desc_order",
    "first_pass = True",
    "Basic authentication is turned off",
    "Basic auth",
    "[tool.ruff]\nline-length = 100",
    "items = [first]\npassword = fallback_password",
    "from huggingface_hub import hf_hub_download",
    "SKIP_THE_CHECKS_IN_THIS_BUILD_WHEN_PINNED = 1",
    "The password is required and is stored hashed.",
    "if password is None:",
    "the password was reset by the admin",
    "<password>${DB_PASSWORD}</password>",
    "<passwordPolicy>strict</passwordPolicy>",
    "AccountKey=",
    "export PGHOST=localhost",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_is_left_alone(text: str) -> None:
    assert redact_text(text) == Redaction(text=text, count=0, kinds=())


def test_several_secrets_are_counted_and_kinds_listed_once_sorted() -> None:
    text = (
        "SLACK_BOT_TOKEN=xoxb-2048-4096-FAKEfakeFAKEfake1234\n"
        "SLACK_APP_TOKEN=xapp-1-A0FAKE00-1234-fakefake0123\n"
        'password = "hunter2"\n'
    )
    result = redact_text(text)
    assert result.count == 3
    assert result.kinds == ("secret_value", "slack_token")
    # the format rule won: the key keeps its name, the value is not counted twice
    assert "SLACK_BOT_TOKEN=[REDACTED:slack_token]" in result.text


def test_redaction_is_idempotent() -> None:
    once = redact("\n".join(text for text, _, _ in SECRETS))
    again = redact_text(once)
    assert again.text == once
    assert again.count == 0


def test_a_private_key_block_is_removed_whole_and_the_code_around_it_kept() -> None:
    text = f"before = 1\n{RSA_BLOCK}\nafter = 2"
    assert redact(text) == "before = 1\n[REDACTED:private_key]\nafter = 2"


def test_a_private_key_with_escaped_newlines_in_json_is_removed() -> None:
    body = PEM_BODY.replace("\n", "\\n")
    text = f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n",'
    assert redact(text) == '"private_key": "[REDACTED:private_key]\\n",'


def test_a_private_key_cut_by_a_chunk_boundary_is_removed_on_both_sides() -> None:
    head = f"key = '''\n-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}"
    tail = f"{PEM_BODY}\n-----END EC PRIVATE KEY-----\n'''\nuse(key)"
    assert redact(head) == "key = '''\n[REDACTED:private_key]"
    assert redact(tail) == "[REDACTED:private_key]\n'''\nuse(key)"


def test_an_encrypted_private_key_block_is_removed() -> None:
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\n"
        f"{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
    )
    assert redact(text) == "[REDACTED:private_key]"


def test_a_public_key_is_not_a_secret() -> None:
    text = f"-----BEGIN PUBLIC KEY-----\n{PEM_BODY}\n-----END PUBLIC KEY-----"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("slackBotToken", True),
        ("api-key", True),
        ("apiKey", True),
        ("APIKEY", True),
        ("client_secret", True),
        ("self.private_key", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("Authorization", True),
        ("pwd", True),
        ("DB_PASS", True),
        ("smtpPass", True),
        ("PGPASSWORD", True),
        ("MYSQL_ROOTPASSWORD", True),
        ("dbsecret", True),
        ("password_field", False),
        ("token_type", False),
        ("max_tokens", False),
        ("secret_name", False),
        ("keyboard", False),
        ("author", False),
        ("oauth_url", False),
        ("bypass", False),
        ("pass_rate_threshold", False),
        ("ENCRYPTION_KEY", False),  # only with a random-looking value
        ("CHARS_PER_TOKEN", False),  # a rate: so many for each token
        ("costPerToken", False),
        ("PER_TOKEN", True),  # nothing it is a rate of
        ("super_token", True),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_every_kind_is_listed() -> None:
    assert set(KINDS) == {kind for _, _, kind in SECRETS}


def test_text_without_secrets_is_returned_unchanged_and_empty_text_works() -> None:
    assert redact_text("") == Redaction("", 0, ())
    prose = "The gateway forwards payments; see docs/architecture.md for the flow."
    assert redact(prose) == prose


@pytest.mark.parametrize(
    "path", ["app.ini", "conf/db.conf", "setup.cfg", ".env", ".env.local", "a.properties"]
)
def test_bare_values_in_configuration_files_are_secrets(path: str) -> None:
    assert is_config_path(path)
    result = redact_text("host = db\npassword = hunter2\nuser = app", path=path)
    assert result.text == "host = db\npassword = [REDACTED:secret_value]\nuser = app"


@pytest.mark.parametrize("path", ["app.py", "src/auth.js", "README.md"])
def test_a_bare_name_in_code_stays_even_beside_an_ini_like_line(path: str) -> None:
    assert not is_config_path(path)
    text = "[main]\npassword = fallback_password"
    assert redact(text, path=path) == text


@pytest.mark.parametrize(
    ("value", "random"),
    [
        ("9f8e7d6c5b4a39281716f5e4d3c2b1a0", True),
        ("key-3ax6xnjp29jd6fds4gc373sgvjxteol0", True),
        ("user-profile-settings-v2", False),
        ("short1234", False),
        ("created_at_desc_order", False),
    ],
)
def test_looks_random(value: str, random: bool) -> None:
    assert looks_random(value) is random


# --- the substrings a rule needs only let it skip texts it could not change ---------------


def _every_rule_run(text: str, path: str | None) -> tuple[str, int, tuple[str, ...]]:
    """Redaction as it was before rules skipped texts lacking their substrings."""
    from szrag.base import redact as module

    config = module.is_config_path(path) if path else bool(module._INI_SECTION.search(text))
    found: list[str] = []
    for rule in (module._CONFIG_RULES if config else module.RULES) + module._PROSE_RULES:
        text = module._apply(rule, text, found)
    if ":" in text:
        text = module._redact_yaml_blocks(text, found)
    return text, len(found), tuple(sorted(set(found)))


SKIP_SAMPLES = (
    "# ſecret: 9f8e7d6c5b1",  # a case-insensitive pattern takes the long s for s
    "# apı_key = 9f8e7d6c5b1",  # and the dotless i for i
    "# TOKEN=abcdef123456",
    "Server=db;User Id=sa;PWD=S3cret!;",
    "AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYXX'",
    "const slackBotToken = 'xoxb-1234567890-abcdefghij'",
    "Authorization: Bearer abcDEF1234567890xyz",
    "authorization: bearer abcDEF1234567890xyz",
    "Authorization: basic dXNlcjpwYXNz",
    "Authorization: Basic dXNlcjpwYXNz",
    "postgres://admin:hunter2@db:5432/app",
    "curl -u admin:pa55word https://example.com",
    "credentials:\n  value: s3cr3t\n",
    "secrets:\n  nested:\n    password: hunter22\n",
    "PASSWORD=hunter2\n",
    "[section]\npassword = hunter2\n",
    "sk-ant-abcdefghijklmnopqrstuvwx and sk-proj-ABCdef1234567890abcdef",
    "ghp_" + "a1" * 20 + " github_pat_" + "b2" * 12,
    "AKIAIOSFODNN7EXAMPLE AIza" + "x" * 35 + " whsec_" + "y1" * 10,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
    "SG.abcdefghijklmnop.abcdefghijklmnopqrstuv sk_live_abcdef123456 rk_test_abcdef123456",
    "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1234567890abcdef\n-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAx1234567890abcdef\n-----END PRIVATE KEY-----",
    "sessionKey = 'a8F3k2L9q0Z7x1C4v6B5'",
    "nothing secret here: just words, a = b; c: d",
    # assignments run on the lines holding a secret name's part only: first and last lines,
    # no final line break, CRLF, a lowercase that grows (İ), a secret name in a comment
    "password = 'hunter22'\nx = 1\ny = 'two'\napi_key = 'a8F3k2L9q0Z7x1C4v6B5'",
    "a = 1\r\nDB_PASSWORD='s3cr3t!'\r\nb = 2\r\n",
    "İstanbul = 'city'\ntoken = 'abc123def456'\n# the deploy token: 9f8e7d6c5b",
    "# note: the api key = 9f8e7d6c5b4a\nconfig = {'secret': 'x9y8z7w6'}; other = 'plain'",
)


@pytest.mark.parametrize("path", [None, "settings.env", "app.py"])
def test_skipping_rules_changes_nothing(path: str | None) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    texts = list(SKIP_SAMPLES)
    texts += [
        file.read_text(errors="replace")
        for file in sorted(fixtures.rglob("*"))
        if file.is_file() and file.stat().st_size < 200_000
    ]
    for text in texts:
        redaction = redact_text(text, path=path)
        expected = _every_rule_run(text, path)
        assert (redaction.text, redaction.count, redaction.kinds) == expected, text[:80]
    assert redact_text(SKIP_SAMPLES[0]).count == 1 and redact_text(SKIP_SAMPLES[1]).count == 1


def test_a_test_files_fixture_values_are_shown_marked_at_the_terminal_only() -> None:
    from szrag.base.redact import redact_for_display

    fixture = (
        'password = "password123"\n'
        'api_token = "Xq7pL2mN9vR4tK8sW3yZ6bC1"\n'  # generated-looking: still a secret
        "key = 'ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'\n"  # a format: always a secret
    )
    shown = redact_for_display(fixture, path="tests/test_auth.py")
    assert 'password = "[TEST VALUE:password123]"' in shown
    assert "Xq7pL2mN9vR4tK8sW3yZ6bC1" not in shown and "ghp_" not in shown
    assert shown.count("[REDACTED:") == 2
    # the application's own code, and whatever goes to a model or a log: redacted
    assert "password123" not in redact_for_display(fixture, path="app/auth.py")
    assert "password123" not in redact(fixture, path="tests/test_auth.py")


def test_retrieve_shows_test_values_at_the_terminal_and_redacts_json(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from szrag.cli import main

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_login.py").write_text(
        'def test_login(client):\n    password = "password123"\n    assert client.login(password)\n'
    )
    (tmp_path / "README.md").write_text("# Login\n")
    root = ["--root", str(tmp_path)]
    text = CliRunner().invoke(main, ["retrieve", "--text", *root, "test", "login", "password"])
    as_json = CliRunner().invoke(main, ["retrieve", "--json", *root, "test", "login", "password"])

    assert text.exit_code == 0 and as_json.exit_code == 0, text.output + as_json.output
    assert "[TEST VALUE:password123]" in text.stdout
    assert "password123" not in as_json.stdout and "[REDACTED:secret_value]" in as_json.stdout
