"""Small files of every type ``retrieval ingest`` reads, written by hand: no office suite."""

from __future__ import annotations

import io
import zipfile

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


def pdf(*lines: str) -> bytes:
    """A one-page PDF showing ``lines`` in Helvetica."""
    shown = " T* ".join(
        "({}) Tj".format(line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)"))
        for line in lines
    )
    stream = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET".encode() if lines else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


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
