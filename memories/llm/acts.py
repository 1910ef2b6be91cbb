"""Dialogue acts: whether a turn states something, asks something, or only keeps the talk going.

Offline rules, after the coarse classes of dialogue-act tagging (Jurafsky, Shriberg & Biasca,
"Switchboard SWBD-DAMSL Shallow-Discourse-Function Annotation", 1997: statements, questions, and
backchannels / acknowledgements such as "uh-huh", "right", "that's great"). A turn is:

- a *backchannel* when every word of it is a function word or a word of conversational
  acknowledgement ("Of course.", "Totally!", "Let me think about that.", "Oh no, I'm sorry to hear
  that."): it carries no information of its own;
- a *question* when every sentence that is not a backchannel asks something (ends with "?", or
  opens with a question word or a request, "remind me", "suggest", and does not end with "!") and
  tells nothing before it asks: "I'm
  thinking of visiting my sister Emily in Denver, any tips?" opens with a first-person clause of
  two content words or more, so it states something too; a check of what the bot remembers about the
  speaker ("Do you remember which race I'm doing? Testing you.") is one even with a short remark
  to the bot beside it, but not with news ("... They fired me today.");
- a *statement* otherwise (a turn that states anything counts as one, questions aside).

Search never shows a backchannel as a memory, and shows a question only as the lead-in to the
turn that answers it (``memories.search``); the offline summariser skips both.
"""

from __future__ import annotations

import re

__all__ = ["BACKCHANNEL", "QUESTION", "STATEMENT", "dialogue_act", "is_backchannel", "is_question", "tells"]

STATEMENT = "statement"
QUESTION = "question"
BACKCHANNEL = "backchannel"

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# English function words (pronouns, articles, auxiliaries, prepositions, conjunctions), as in the
# usual stop-word lists (e.g. PostgreSQL's english.stop, which comes from Snowball).
_FUNCTION_WORDS = frozenset(
    """a about above after again all am an and any are aren't as at be because been before being below between
    both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for
    from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't
    my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she
    she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's
    whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
    im ive id ill dont cant wont thats its youre""".split()
)
# Words of acknowledgement, agreement, sympathy and thanks that say nothing about the world.
_ACKNOWLEDGEMENTS = frozenset(
    """ok okay okey k kk alright allright sure yes yeah yep yup yea aye nope nah no hmm hm mm mhm uh huh um oh ah
    aw aww wow whoa ooh ha haha hahaha hah lol lmao hehe heh omg gosh yay hey hi hello bye goodbye cheers thanks
    thank thx ty welcome please sorry apologies course totally absolutely definitely certainly exactly indeed
    right true fair enough agreed agree got get gotcha see noted understood understand makes make sense sound
    sounds great good nice cool awesome amazing lovely wonderful fantastic perfect brilliant excellent fun
    interesting neat sweet glad happy love hope hear heard know knew think thought mean guess bet well really
    just like let tell say said go ahead anytime problem worries worry deal luck care night morning day
    evening afternoon keep mind back soon talk later chat chatting feel feeling idea ideas point thing
    things anything something everything stuff sad shame pity terrible awful tough rough hard bad will much
    best enjoy take one congratulations congrats""".split()
)
# The most words of an assistant's reply that reacts rather than tells, and what makes it tell.
_REACTION_WORDS = 6
_NAMES_OR_NUMBERS = re.compile(r"\d|\b[A-Z]")
_QUESTION_OPENER = re.compile(
    r"^(?:(?:what|what's|whats|where|where's|when|when's|who|who's|whom|whose|why|how|how's|which)\b"
    r"|(?:do|does|did|is|are|was|were|can|could|would|will|should|shall|may|have|has|am)\s+"
    r"(?:you|i|we|they|he|she|it|there|my|your|our|their|his|her|the|this|that|these|those|anyone|someone)\b"
    # A request asks too: "remind me where I work", "suggest a dessert I can eat", "any tips for me".
    r"|(?:please\s+)?(?:remind|tell|show|give|help|teach|explain|describe)\s+(?:me|us)\b"
    r"|(?:please\s+)?(?:suggest|recommend)\b"
    r"|any\s+(?:idea|ideas|tips?|advice|suggestions?|recommendations?)\b)",
    re.IGNORECASE,
)


# A question that checks what the bot remembers ("do you remember what team I support?").
_RECALL = re.compile(
    r"\bremember\s+(?:what|which|where|who|how)\b[^?]*\b(?:I|I'm|my|me)\b",
    re.IGNORECASE,
)
# The most words of a remark beside such a question ("Testing you.", "Thiago says you forget everything").
_REMARK_WORDS = 6
_SPEAKER_NEWS = re.compile(r"^(?:I|I'm|I've|we|we're|we've)\b", re.IGNORECASE)
_TO_THE_BOT = re.compile(r"\b(?:you|your|you're|you'll)\b", re.IGNORECASE)
# ... and of one that does not speak to the bot ("Got a question.").
_ASIDE_WORDS = 3
_LEADING_FILLER = re.compile(r"^(?:(?:well|so|oh|ok|okay|anyway|haha|lol|also|and)\b[,.]?\s*)+", re.IGNORECASE)
# A sentence's first clause, when it speaks of the speaker: "I'm allergic to shellfish, any idea?".
# It ends at a comma or where a question is embedded ("I wonder what my dog's name was?").
_FIRST_PERSON_CLAUSE = re.compile(
    r"^(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our)\b"
    r"(?:(?!\b(?:what|where|when|who|whom|whose|why|how|which|if|whether)\b)[^,;:?])*",
    re.IGNORECASE,
)
_CONTENT_WORDS = 2

# "What a lovely name.", "How nice of her." exclaim; they do not ask.
_EXCLAMATION = re.compile(
    r"^(?:what (?:a|an)\b|how (?!(?:do|does|did|is|are|was|were|can|could|would|will|should|much|many|long|often|"
    r"old|far)\b)\w+(?: of\b|[.!]|$))",
    re.IGNORECASE,
)


def is_backchannel(text: str) -> bool:
    """Whether ``text`` holds words and every one is a function word or an acknowledgement."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return bool(words) and all(w in _FUNCTION_WORDS or w in _ACKNOWLEDGEMENTS for w in words)


def is_question(sentence: str) -> bool:
    """Whether one sentence asks something: it ends with "?", or opens with a question word and
    neither ends with "!" nor exclaims ("What a day.", "How lovely.")."""
    stripped = sentence.strip().rstrip("\"')]}")
    if stripped.endswith("?"):
        return True
    if stripped.endswith("!") or _EXCLAMATION.match(stripped):
        return False
    return bool(_QUESTION_OPENER.match(stripped)) and len(stripped.split()) > 1


def tells(sentence: str) -> bool:
    """Whether ``sentence`` opens with a first-person clause holding at least two content words (not
    function words, not acknowledgements): "I need new ideas for my meal prep, can you help?" tells;
    "I was wondering, where do I work?" and "I'm hungry, any idea?" do not."""
    clause = _FIRST_PERSON_CLAUSE.match(sentence.strip().replace("\u2019", "'"))
    if clause is None:
        return False
    words = _WORD.findall(clause.group(0).lower())
    return sum(w not in _FUNCTION_WORDS and w not in _ACKNOWLEDGEMENTS for w in words) >= _CONTENT_WORDS


def _remark(sentence: str) -> bool:
    """Whether a sentence beside a check of the bot's memory only remarks on it: a few words to the bot
    ("Testing you.", "My wife bet you don't.") or fewer ("Got a question."), no exclamation; news is
    not a remark ("They fired me today.", "We moved.")."""
    sentence = _LEADING_FILLER.sub("", sentence.strip())
    words = sentence.split()
    if sentence.endswith("!") or len(words) > _REMARK_WORDS or _SPEAKER_NEWS.match(sentence):
        return False
    return bool(_TO_THE_BOT.search(sentence)) or len(words) <= _ASIDE_WORDS


def dialogue_act(text: str, *, role: str = "user") -> str:
    """``STATEMENT``, ``QUESTION`` or ``BACKCHANNEL`` for one turn's text (see the module docstring).

    An assistant's reply of a few words that names nothing ("Haha, perfect name.", "A good study
    buddy!": no digit, no capitalised word after its first) is a backchannel too: a bot reacts more
    than it tells. Sentences are split at end punctuation followed by a space: a classifier run on
    every stored message must stay cheap, and an abbreviation split too early only adds a short
    statement.
    """
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    said = [s for s in sentences if not is_backchannel(s)]
    if not said:
        return BACKCHANNEL if sentences else STATEMENT
    if all(is_question(s) and not tells(s) for s in said):
        return QUESTION
    # "Do you remember which race I'm doing? Testing you.": checking the bot's memory, with a remark.
    if any(is_question(s) and _RECALL.search(s) and not tells(s) for s in said) and all(
        (is_question(s) and not tells(s)) or _remark(s) for s in said
    ):
        return QUESTION
    words = text.split()
    if role == "assistant" and len(words) <= _REACTION_WORDS and not _NAMES_OR_NUMBERS.search(" ".join(words[1:])):
        return BACKCHANNEL
    return STATEMENT
