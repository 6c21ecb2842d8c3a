"""Small files of every type ``retrieval ingest`` reads, written by hand: no office suite."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

FRONT_MATTER = """---
document_id: grey-blight
title: Grey blight
domain: plant_diseases
region: assam
---
# Grey blight of tea

Pestalotiopsis causes grey lesions on mature leaves.
"""

PAGE = b"""<!doctype html><html><head><title>Red rust | Tea notes</title>
<style>body { color: red }</style><script>var tracking = 1;</script></head>
<body><nav><a href="/">Home</a></nav><main><h1>Red rust</h1>
<p>An algal disease of <b>stressed</b> bushes.</p><h2>Control</h2>
<ul><li>Copper sprays</li><li>Better drainage</li></ul></main></body></html>"""


def pdf_literal(text: str) -> str:
    """``text`` as a PDF literal string (shown in Helvetica, so Latin-1 text only)."""
    return "({})".format(text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)"))


def pdf_text_string(text: str) -> bytes:
    """``text`` as a PDF text string of any characters (UTF-16 with a byte order mark)."""
    return b"<FEFF%s>" % text.encode("utf-16-be").hex().upper().encode()


def pdf_file(objects: list[bytes], info: int | None = None) -> bytes:
    """A PDF of ``objects``, numbered from 1, the first the catalog; ``info`` numbers the
    document information dictionary."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info_entry = b" /Info %d 0 R" % info if info else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info_entry,
        xref,
    )
    return bytes(out)


def stream(content: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)


def pdf(*lines: str) -> bytes:
    """A one-page PDF showing ``lines`` in Helvetica."""
    shown = " T* ".join(f"{pdf_literal(line)} Tj" for line in lines)
    content = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET".encode() if lines else b""
    return pdf_file(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            stream(content),
        ]
    )


PdfPage = list[tuple[float, str]]
"""The lines of a page, top to bottom: (font size in points, text)."""


@dataclass(frozen=True)
class Bookmark:
    """An outline entry: its level (1 for the top), title and page (0 for the first)."""

    level: int
    title: str
    page: int


def page_content(lines: PdfPage, sized_by_matrix: bool) -> bytes:
    """Text operators setting ``lines`` one under another from the top of a Letter page."""
    shown = []
    top = 740.0
    for size, text in lines:
        if sized_by_matrix:
            shown.append(f"/F1 1 Tf {size} 0 0 {size} 72 {top:.1f} Tm {pdf_literal(text)} Tj")
        else:
            shown.append(f"/F1 {size} Tf 1 0 0 1 72 {top:.1f} Tm {pdf_literal(text)} Tj")
        top -= size * 1.4
    return f"BT {' '.join(shown)} ET".encode() if lines else b""


def outline_objects(bookmarks: list[Bookmark], first: int, page_refs: list[int]) -> list[bytes]:
    """The outline dictionary (object ``first``) and one item per bookmark after it (numbered
    from 1, the dictionary 0), nested by level: a bookmark is the child of the closest one
    before it of a lower level."""
    parent_of: dict[int, int] = {}
    ancestors: list[int] = []
    for index, bookmark in enumerate(bookmarks, start=1):
        while ancestors and bookmarks[ancestors[-1] - 1].level >= bookmark.level:
            ancestors.pop()
        parent_of[index] = ancestors[-1] if ancestors else 0
        ancestors.append(index)
    children = {
        index: [child for child, parent in parent_of.items() if parent == index]
        for index in range(len(bookmarks) + 1)
    }

    def ref(index: int) -> bytes:
        return b"%d 0 R" % (first + index)

    def links(index: int) -> bytes:
        kids = children[index]
        if not kids:
            return b""
        return b" /First %s /Last %s /Count %d" % (ref(kids[0]), ref(kids[-1]), len(kids))

    objects = [b"<< /Type /Outlines%s >>" % links(0)]
    for index, bookmark in enumerate(bookmarks, start=1):
        siblings = children[parent_of[index]]
        position = siblings.index(index)
        neighbours = b""
        if position:
            neighbours += b" /Prev " + ref(siblings[position - 1])
        if position + 1 < len(siblings):
            neighbours += b" /Next " + ref(siblings[position + 1])
        objects.append(
            b"<< /Title %s /Parent %s%s%s /Dest [%d 0 R /Fit] >>"
            % (
                pdf_text_string(bookmark.title),
                ref(parent_of[index]),
                neighbours,
                links(index),
                page_refs[bookmark.page],
            )
        )
    return objects


def pdf_document(
    pages: list[PdfPage],
    *,
    title: str | None = None,
    outline: list[Bookmark] | None = None,
    sized_by_matrix: bool = False,
) -> bytes:
    """A PDF of ``pages`` in Helvetica; ``title`` goes in its document information dictionary
    and ``outline`` makes its bookmarks. With ``sized_by_matrix`` a line's size is set by its
    text matrix over a one-point font, as some producers do, instead of by the font size."""
    page_refs = [4 + 2 * n for n in range(len(pages))]
    outline_first = 4 + 2 * len(pages)
    kids = " ".join(f"{ref} 0 R" for ref in page_refs)
    outline_entry = f" /Outlines {outline_first} 0 R" if outline else ""
    objects = [
        f"<< /Type /Catalog /Pages 2 0 R{outline_entry} >>".encode(),
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for ref, lines in zip(page_refs, pages, strict=True):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (ref + 1)
        )
        objects.append(stream(page_content(lines, sized_by_matrix)))
    if outline:
        objects.extend(outline_objects(outline, outline_first, page_refs))
    if title is not None:
        objects.append(b"<< /Title %s /Producer (retrieval-testkit) >>" % pdf_text_string(title))
    return pdf_file(objects, info=len(objects) if title is not None else None)


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def docx_body(paragraphs: list[tuple[str | None, str]]) -> str:
    """``word/document.xml``: (style id or None, text) per paragraph."""
    body = "".join(
        "<w:p>"
        + (f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else "")
        + f"<w:r><w:t>{text}</w:t></w:r></w:p>"
        for style, text in paragraphs
    )
    return f"<w:document {W}><w:body>{body}</w:body></w:document>"


def docx(paragraphs: list[tuple[str | None, str]], *, document_xml: str | None = None) -> bytes:
    """A minimal Word file: (style id or None, text) per paragraph, or ``document_xml`` as the
    whole body part; ``Heading1`` and ``Heading2`` are defined as Word defines them."""
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/>'
        "</w:style>"
        for n in (1, 2)
    )
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/word/document.xml" ContentType="{main}.document.main+xml"/>'
            f'<Override PartName="/word/styles.xml" ContentType="{main}.styles+xml"/></Types>',
        )
        archive.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{RELATIONSHIPS}"><Relationship Id="rId1" '
            f'Type="{OFFICE}/officeDocument" Target="word/document.xml"/></Relationships>',
        )
        archive.writestr(
            "word/_rels/document.xml.rels",
            f'<Relationships xmlns="{RELATIONSHIPS}"><Relationship Id="rId1" '
            f'Type="{OFFICE}/styles" Target="styles.xml"/></Relationships>',
        )
        archive.writestr("word/styles.xml", f"<w:styles {W}>{styles}</w:styles>")
        archive.writestr("word/document.xml", document_xml or docx_body(paragraphs))
    return buffer.getvalue()
