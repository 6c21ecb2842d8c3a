"""HTML to markdown: code blocks keep their language and drop mdBook's hidden lines."""

from __future__ import annotations

import pytest

from retrieval.adapters.files.converters import html_to_markdown

CODE = 'fn main() {\n    println!("Hello, world!");\n}'


def markdown_of(html: str) -> str:
    return html_to_markdown(f"<html><body><main>{html}</main></body></html>".encode()).markdown


@pytest.mark.parametrize(
    "pre",
    [
        '<pre><code class="language-rust">{}</code></pre>',
        '<pre><code class="language-rust hljs">{}</code></pre>',
        '<pre class="playground"><code class="language-rust edition2021 hljs">{}</code></pre>',
        '<pre><code class="hljs rust">{}</code></pre>',
        '<pre><code class="lang-rust">{}</code></pre>',
        '<pre class="language-rust"><code>{}</code></pre>',
        '<pre class="lang-rust">{}</pre>',
    ],
    ids=["mdbook", "highlighted", "playground", "hljs", "lang", "on-pre", "pre-only"],
)
def test_a_code_block_keeps_its_language(pre: str) -> None:
    assert markdown_of(pre.format(CODE)) == f"```rust\n{CODE}\n```"


@pytest.mark.parametrize(
    "pre",
    ["<pre><code>{}</code></pre>", '<pre><code class="hljs">{}</code></pre>'],
    ids=["no-class", "highlighted-only"],
)
def test_a_code_block_of_no_language_has_a_bare_fence(pre: str) -> None:
    assert markdown_of(pre.format(CODE)) == f"```\n{CODE}\n```"


def test_mdbook_s_hidden_lines_are_dropped() -> None:
    pre = (
        '<pre class="playground"><code class="language-rust">'
        '<span class="boring">#![allow(unused)]\n</span>'
        '<span class="boring">fn main() {\n</span>'
        "let x = 1;\n"
        '<span class="boring">}</span></code></pre>'
    )
    assert markdown_of(pre) == "```rust\nlet x = 1;\n```"
