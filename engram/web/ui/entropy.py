"""How much randomness a written-out secret can hold at most: an estimate that errs high for
random strings and low for what people make, so a secret that falls short is not random.

A secret is read left to right as a compressor and a guesser would read it, each stretch costing
what it takes to say it given what came before:

- a stretch that repeats an earlier one (``password1234password1234``) costs only where the copy
  starts and how long it is — the idea of LZ77 compression;
- a run along a sequence (``1234``, ``abcd``, ``aaaa``, ``9753``) or a keyboard row (``qwerty``,
  ``asdf``) costs its first character, its step and its length;
- a word-like run of letters (four or more, lower case or capitalised, a vowel in every four, or
  any such run beside a space, as the words of a sentence are; and the separator after it) costs :data:`WORD_LETTER_BITS` a letter, about what a letter of English carries;
- any other character costs ``log2`` of the alphabet its character classes span (lower case 26,
  upper case 26, digits 10, ASCII punctuation and space 33, anything else 100) — the most a
  character drawn at random from those classes carries; a secret all of hex digits is hex, 4 bits
  a digit (and its letters are not words).

Measured over 100,000 draws each (``nice .venv/bin/python`` over ``secrets``, 2026-12-06):
``secrets.token_urlsafe(48)`` (64 characters, 384 random bits) estimates at 262 bits at the
least, 395 on average; ``token_hex(48)`` (96 hex digits) at 340 at the least, 383 on average. Thirty-two random bytes are
exactly 256 bits, so a written-out 32-byte secret passes only when nothing in it looks like a
pattern (``token_urlsafe(32)``: 7 in 10 pass, ``token_hex(32)``: 94 in 100): make 48. ``password1234`` four times estimates
at 39 bits, a 49-character passphrase of English words at about 120. No estimate proves
randomness; this one refuses what cannot be random at the length asked.
"""

from __future__ import annotations

import math
import string

WORD_LETTER_BITS = 2.5
"""What a letter of an English word carries (Shannon put it near 1-2 bits in running text; a
dictionary guesser needs fewer): a word-like run counts this much a letter, not the alphabet's."""
_CLASSES = (
    (frozenset(string.ascii_lowercase), 26),
    (frozenset(string.ascii_uppercase), 26),
    (frozenset(string.digits), 10),
    (frozenset(string.punctuation + " "), 33),
)
_OTHER_CLASS = 100
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890", "qaz", "wsx", "edc", "rfv", "tgb")
_VOWELS = frozenset("aeiou")
_HEX = frozenset("0123456789abcdef")
_HEX_UPPER = frozenset("0123456789ABCDEF")
_LOWER = frozenset(string.ascii_lowercase)
_SEPARATORS = frozenset(string.punctuation + " ")
MIN_RUN = 4
"""The shortest repeat or sequence read as one: shorter ones happen by chance in random text."""
MIN_WORD = 4


def _alphabet(secret: str) -> int:
    if set(secret) <= _HEX or set(secret) <= _HEX_UPPER:
        return 16
    size = sum(n for chars, n in _CLASSES if any(c in chars for c in secret))
    if any(not any(c in chars for chars, _ in _CLASSES) for c in secret):
        size += _OTHER_CLASS
    return max(size, 2)


def _repeat_at(secret: str, i: int) -> int:
    """The length of the longest stretch from ``i`` that also starts before ``i``."""
    best = 0
    for length in range(MIN_RUN, len(secret) - i + 1):
        if secret[i : i + length] in secret[: i + length - 1]:
            best = length
        else:
            break
    return best


def _sequence_at(secret: str, i: int) -> int:
    """The length of the run from ``i`` with one code-point step of at most 2 either way (a
    repeated character is step 0), or along a keyboard row, either direction."""
    if i + 1 >= len(secret):
        return 1
    step = ord(secret[i + 1]) - ord(secret[i])
    length = 1
    if abs(step) <= 2:
        while (
            i + length < len(secret)
            and ord(secret[i + length]) - ord(secret[i + length - 1]) == step
        ):
            length += 1
    lowered = secret.lower()
    for row in _ROWS:
        for line in (row, row[::-1]):
            run = 0
            while i + run < len(secret) and lowered[i : i + run + 1] in line:
                run += 1
            length = max(length, run)
    return length


def _word_at(secret: str, i: int) -> int:
    """The length of a word-like run of letters from ``i`` (0 if there is none): at least
    :data:`MIN_WORD` ASCII letters, lower case after an optional capital, with a vowel; one
    separator after it (a space or punctuation) belongs to it, as between the words of a
    passphrase."""
    end = i + 1 if secret[i].isascii() and secret[i].isalpha() else i
    while end < len(secret) and secret[end] in _LOWER:
        end += 1
    run = secret[i:end]
    spaced = (end < len(secret) and secret[end] == " ") or (i > 0 and secret[i - 1] == " ")
    vowels = sum(c in _VOWELS for c in run.lower())
    wordy = len(run) >= MIN_WORD and vowels * 4 >= len(run)
    if not run or not (wordy or spaced):
        return 0
    if end < len(secret) and secret[end] in _SEPARATORS:
        end += 1
    return end - i


def estimated_bits(secret: str) -> float:
    """The most randomness ``secret`` can hold, in bits (see the module's description)."""
    alphabet = _alphabet(secret)
    per_char = math.log2(alphabet)
    bits = 0.0
    i = 0
    while i < len(secret):
        repeat = _repeat_at(secret, i)
        sequence = _sequence_at(secret, i)
        word = _word_at(secret, i) if alphabet > 16 else 0
        if repeat >= MIN_RUN and repeat >= sequence:
            bits += math.log2(i + 1) + math.log2(repeat)
            i += repeat
        elif sequence >= MIN_RUN:
            bits += per_char + 3 + math.log2(sequence)
            i += sequence
        elif word:
            bits += word * WORD_LETTER_BITS
            i += word
        else:
            bits += per_char
            i += 1
    return bits
