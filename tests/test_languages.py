import pytest

from xsimpp.datasets.languages import FLORES200_CODES, UnknownLanguageError, resolve_language, resolve_languages


@pytest.mark.parametrize(
    "code,expected",
    [("kea", "kea_Latn"), ("fur", "fur_Latn"), ("kea_Latn", "kea_Latn"), ("KEA_LATN", "kea_Latn"),
     ("swa", "swh_Latn"), ("sw", "swh_Latn"), ("de", "deu_Latn"), ("zho_Hant", "zho_Hant"),
     ("cmn_Hans", "zho_Hans"), ("fas", "pes_Arab"), ("kea-Latn", "kea_Latn")],
)
def test_resolves(code, expected):
    assert resolve_language(code) == expected


def test_204_codes():
    assert len(FLORES200_CODES) == 204 == len(set(FLORES200_CODES))


def test_ambiguous_lists_options():
    with pytest.raises(UnknownLanguageError, match="zho_Hans, zho_Hant"):
        resolve_language("zho")


def test_unknown_suggests_closest():
    with pytest.raises(UnknownLanguageError) as e:
        resolve_language("kea_Latm")
    assert "Unknown language code 'kea_Latm'" in str(e.value) and "kea_Latn" in str(e.value)


def test_list_dedupes_after_resolution():
    assert resolve_languages("kea,kea_Latn, fur") == ["kea_Latn", "fur_Latn"]
