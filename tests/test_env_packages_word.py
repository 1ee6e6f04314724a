"""env_packages._word_in answers what `re.search(rf"\\b{re.escape(name)}\\b", text)` answers
(`.pth` and editable-finder code naming a package), without a pattern compiled per name."""

from __future__ import annotations

import random
import re
import sys

from wgmma_lsp.interpret.env_packages import _is_word_char, _word_in


def test_word_characters_are_re_s() -> None:
    word = re.compile(r"\w")
    assert all((word.match(c) is not None) == _is_word_char(c) for c in map(chr, range(sys.maxunicode + 1)))


def test_the_same_answers_as_the_pattern() -> None:
    rnd = random.Random(0)
    alphabet = "ab_1 .-\n\u00e9\u2118\u0663x"  # word, non-word, a non-word identifier character
    for _ in range(50_000):
        name = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 3)))
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        assert _word_in(name, text) == (re.search(rf"\b{re.escape(name)}\b", text) is not None), (name, text)
    assert _word_in("absl", "import absl.flags") and not _word_in("absl", "import absl_py")
