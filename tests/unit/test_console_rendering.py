"""Chunk text as the console shows it: Markdown made HTML, with nothing of the text's own HTML
or scripts let through."""

from __future__ import annotations

from retrieval.console.rendering import environment, markdown_html


def test_emphasis_and_fences_become_markup_not_characters() -> None:
    html = markdown_html("Cover **young** bushes.\n\n```python\nprint('thatch')\n```\n")
    assert "<strong>young</strong>" in html
    assert "<pre><code class=\"language-python\">print('thatch')" in html
    assert "```" not in html
    assert "**" not in html


def test_html_in_a_chunk_is_shown_as_text() -> None:
    html = markdown_html('Before <script>alert("x")</script> after\n\n<img src=x onerror=alert(1)>')
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "<img" not in html


def test_a_script_address_is_no_link() -> None:
    html = markdown_html("[frost](javascript:alert(1)) and [ok](https://kb.example/frost)")
    assert 'href="javascript' not in html
    assert 'href="https://kb.example/frost"' in html


def test_a_fence_s_language_cannot_leave_its_attribute() -> None:
    html = markdown_html('```py" onmouseover="alert(1)\ncode\n```')
    assert 'onmouseover="' not in html
    assert "<code" in html


def test_lines_of_plain_text_keep_their_breaks() -> None:
    assert "<br" in markdown_html("first line\nsecond line")


def test_templates_render_chunk_text_through_the_filter() -> None:
    template = environment().from_string("{{ text | markdown }}")
    assert template.render(text="<b>x</b> *y*") == "<p>&lt;b&gt;x&lt;/b&gt; <em>y</em></p>\n"
