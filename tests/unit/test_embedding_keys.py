import hashlib

from retrieval.domain.embedding_keys import InputType, embedding_key


def test_a_key_names_model_dimension_role_and_text_hash() -> None:
    digest = hashlib.sha256(b"Blister blight").hexdigest()
    key = embedding_key("e5 (4-bit)", 384, InputType.PASSAGE, "Blister blight")
    assert key == f"e5 (4-bit)@384:passage:{digest}"


def test_keys_differ_by_every_part() -> None:
    base = ("m", 8, InputType.PASSAGE, "text")
    variants = [
        ("m2", 8, InputType.PASSAGE, "text"),
        ("m", 16, InputType.PASSAGE, "text"),
        ("m", 8, InputType.QUERY, "text"),
        ("m", 8, InputType.PASSAGE, "text "),
    ]
    assert len({embedding_key(*parts) for parts in [base, *variants]}) == 5
    assert embedding_key(*base) == embedding_key(*base)
