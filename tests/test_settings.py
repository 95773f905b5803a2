"""Settings from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from szrag.base.errors import ConfigError
from szrag.base.settings import (
    DEFAULT_AI_MODEL,
    DEFAULT_AI_URL,
    Settings,
    chat_completions_url,
    key_route,
)


def test_defaults_follow_the_spec() -> None:
    settings = Settings.from_env({})

    assert settings.ai_url == DEFAULT_AI_URL == "https://ai.hackclub.com/proxy/v1"
    assert settings.ai_model == DEFAULT_AI_MODEL == "openai/gpt-6-luna"
    assert settings.ai_api_key is None
    assert not settings.has_key
    assert settings.endpoint == "https://ai.hackclub.com/proxy/v1/chat/completions"


def test_values_are_read_and_trimmed() -> None:
    settings = Settings.from_env(
        {
            "AI_URL": " http://localhost:11434/v1/ ",
            "AI_MODEL": "llama3",
            "AI_API_KEY": " secret ",
            "SZRAG_AI_CONNECT_TIMEOUT": "1.5",
            "SZRAG_AI_READ_TIMEOUT": "30",
            "SZRAG_AI_RETRIES": "0",
            "SZRAG_AI_RETRY_DELAY": "0",
            "SZRAG_AI_RETRY_MAX_DELAY": "2",
        }
    )

    assert settings == Settings(
        ai_url="http://localhost:11434/v1/",
        ai_model="llama3",
        ai_api_key="secret",
        connect_timeout=1.5,
        read_timeout=30.0,
        retries=0,
        retry_delay=0.0,
        retry_max_delay=2.0,
    )
    assert settings.endpoint == "http://localhost:11434/v1/chat/completions"


def test_blank_values_mean_the_default() -> None:
    settings = Settings.from_env({"AI_URL": "", "AI_MODEL": "  ", "AI_API_KEY": " "})

    assert (settings.ai_url, settings.ai_model, settings.ai_api_key) == (
        DEFAULT_AI_URL,
        DEFAULT_AI_MODEL,
        None,
    )


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("https://x.test/v1", "https://x.test/v1/chat/completions"),
        ("https://x.test/v1/", "https://x.test/v1/chat/completions"),
        ("https://x.test/v1/chat/completions", "https://x.test/v1/chat/completions"),
        ("https://x.test/v1/chat/completions/", "https://x.test/v1/chat/completions"),
    ],
)
def test_chat_completions_url(url: str, endpoint: str) -> None:
    assert chat_completions_url(url) == endpoint


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("SZRAG_AI_READ_TIMEOUT", "soon", "must be a number"),
        ("SZRAG_AI_READ_TIMEOUT", "0", "greater than 0"),
        ("SZRAG_AI_CONNECT_TIMEOUT", "-1", "greater than 0"),
        ("SZRAG_AI_RETRIES", "1.5", "whole number"),
        ("SZRAG_AI_RETRIES", "-1", "0 or more"),
        ("SZRAG_AI_RETRY_DELAY", "nan", "0 or more"),
    ],
)
def test_bad_numbers_are_config_errors(name: str, value: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle) as caught:
        Settings.from_env({name: value})

    assert name in caught.value.message


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("ftp://x.test/v1", "must start with http:// or https://"),
        ("localhost:8080/v1", "must start with http:// or https://"),
        ("x.test/v1", "must start with http:// or https://"),
        ("http://x.test:abc/v1", "not a valid URL"),
        ("http://x.test:99999/v1", "not a valid URL"),
        ("http://[::1/v1", "not a valid URL"),
        ("https:///v1", "not a valid URL"),
        ("https://exa mple.test/v1", "not a valid URL"),
    ],
)
def test_a_bad_ai_url_is_a_config_error(value: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle) as caught:
        Settings.from_env({"AI_URL": value})

    assert "AI_URL" in caught.value.message


@pytest.mark.parametrize("value", ["http://127.0.0.1:8080/v1", "HTTPS://x.test", "http://[::1]:9/"])
def test_good_ai_urls_are_kept(value: str) -> None:
    assert Settings.from_env({"AI_URL": value}).ai_url == value


def test_openai_variables_stand_in_when_the_ai_ones_are_unset() -> None:
    openai = {"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    settings = Settings.from_env(openai)
    assert (settings.ai_api_key, settings.ai_url) == ("sk-o", "http://127.0.0.1:11434/v1")
    both = Settings.from_env({**openai, "AI_API_KEY": "k", "AI_URL": "http://127.0.0.1:1/v1"})
    assert (both.ai_api_key, both.ai_url) == ("k", "http://127.0.0.1:1/v1")


def test_a_key_from_openai_api_key_goes_to_openai_unless_a_url_says_otherwise() -> None:
    openai = Settings.from_env({"OPENAI_API_KEY": "sk-o"})
    assert openai.endpoint == "https://api.openai.com/v1/chat/completions"
    assert (openai.ai_model, openai.key_source, openai.url_source) == (
        "gpt-4o-mini",
        "OPENAI_API_KEY",
        None,
    )
    assert key_route(openai) == (
        "the key from OPENAI_API_KEY goes to https://api.openai.com/v1/chat/completions"
        " (the default URL)"
    )
    chosen = Settings.from_env({"OPENAI_API_KEY": "sk-o", "AI_MODEL": "gpt-4.1"})
    assert (chosen.ai_url, chosen.ai_model) == ("https://api.openai.com/v1", "gpt-4.1")
    proxied = Settings.from_env({"OPENAI_API_KEY": "sk-o", "AI_URL": "http://127.0.0.1:9/v1"})
    assert proxied.ai_url == "http://127.0.0.1:9/v1" and proxied.url_source == "AI_URL"
    assert "OPENAI_API_KEY goes to http://127.0.0.1:9/v1/chat/completions (AI_URL)" in key_route(
        proxied
    )
    # the proxy stays the default of szrag's own key
    own = Settings.from_env({"AI_API_KEY": "k"})
    assert own.ai_url == "https://ai.hackclub.com/proxy/v1" and own.key_source == "AI_API_KEY"
    assert own.ai_model == "openai/gpt-6-luna"


def test_reply_limits_and_max_tokens() -> None:
    defaults = Settings.from_env({})
    assert (defaults.total_timeout, defaults.max_reply_chars, defaults.max_tokens) == (
        300.0,
        200_000,
        None,
    )
    chosen = Settings.from_env(
        {
            "SZRAG_AI_TOTAL_TIMEOUT": "30",
            "SZRAG_AI_MAX_REPLY_CHARS": "5000",
            "SZRAG_AI_MAX_TOKENS": "256",
        }
    )
    assert (chosen.total_timeout, chosen.max_reply_chars, chosen.max_tokens) == (30.0, 5000, 256)
    with pytest.raises(ConfigError, match="SZRAG_AI_TOTAL_TIMEOUT must be greater than 0"):
        Settings.from_env({"SZRAG_AI_TOTAL_TIMEOUT": "0"})


def test_live_tools_have_one_default_for_every_face() -> None:
    from szrag.base.settings import live_tools_enabled
    from szrag.server.settings import ServerSettings

    assert live_tools_enabled({}) is True
    assert live_tools_enabled({"SZRAG_TOOLS": "0"}) is False
    assert ServerSettings.from_env({"SZRAG_TOOLS": "off"}).live_tools is False
    with pytest.raises(ConfigError, match="SZRAG_TOOLS must be 1 or 0"):
        live_tools_enabled({"SZRAG_TOOLS": "maybe"})


def test_the_repository_may_turn_the_live_tools_off(tmp_path: Path) -> None:
    from szrag.base.config import load_repo_config
    from szrag.base.settings import live_tools_enabled

    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.toml").write_text("tools = false\n")
    repository = load_repo_config(tmp_path).tools
    assert repository is False
    assert live_tools_enabled({}, repository=repository) is False
    assert live_tools_enabled({"SZRAG_TOOLS": "1"}, repository=repository) is True  # env wins
    (tmp_path / ".rag" / "config.toml").write_text('tools = "no"\n')
    with pytest.raises(ConfigError, match="tools must be true or false"):
        load_repo_config(tmp_path)
