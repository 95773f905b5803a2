"""Imports of Go, Java, PHP, C#, Rust and Ruby resolved to the repository's own files."""

from __future__ import annotations

import pytest

from szrag.code.resolve import resolve_edges

KNOWN = frozenset(
    {
        "cmd/shop/main.go",
        "internal/store/store.go",
        "internal/store/query.go",
        "internal/store/store_test.go",
        "src/main/java/com/example/shop/model/Item.java",
        "src/main/java/com/example/shop/ItemController.java",
        "app/Models/Item.php",
        "Shop/Models/Item.cs",
        "src/main.rs",
        "src/store.rs",
        "src/api/mod.rs",
        "src/api/routes.rs",
        "src/api/handlers.rs",
        "app.rb",
        "lib/store.rb",
        "lib/store/query.rb",
    }
)


def edges(path: str, language: str, *sources: str) -> list[str]:
    record = {"language": language, "imports": [{"source": source} for source in sources]}
    return [target for target, _ in resolve_edges(path, record, KNOWN)]


def test_a_go_import_is_the_package_directory() -> None:
    assert edges(
        "cmd/shop/main.go", "go", "example.com/shop/internal/store", "fmt", "net/http"
    ) == [
        "internal/store/query.go",
        "internal/store/store.go",
    ]


@pytest.mark.parametrize(
    ("path", "language", "source", "target"),
    [
        (
            "src/main/java/com/example/shop/ItemController.java",
            "java",
            "com.example.shop.model.Item",
            "src/main/java/com/example/shop/model/Item.java",
        ),
        ("routes/web.php", "php", "App\\Models\\Item", "app/Models/Item.php"),
        ("Shop/Program.cs", "csharp", "Shop.Models.Item", "Shop/Models/Item.cs"),
        ("src/main.rs", "rust", "store", "src/store.rs"),
        ("src/main.rs", "rust", "api", "src/api/mod.rs"),
        ("src/api/mod.rs", "rust", "routes", "src/api/routes.rs"),
        ("src/main.rs", "rust", "crate::api::handlers::list", "src/api/handlers.rs"),
        ("app.rb", "ruby", "lib/store", "lib/store.rb"),
        ("lib/store.rb", "ruby", "store/query", "lib/store/query.rb"),
    ],
)
def test_a_named_module_is_its_file(path: str, language: str, source: str, target: str) -> None:
    assert edges(path, language, source) == [target]


def test_packages_from_elsewhere_make_no_edge() -> None:
    assert edges("src/main.rs", "rust", "std::env", "axum::{routing::get,Router}") == []
    assert (
        edges("src/main/java/com/example/shop/ItemController.java", "java", "java.util.List") == []
    )
    assert edges("app.rb", "ruby", "sinatra") == []
