"""Content words of a text, crudely stemmed: the shared currency of the word-overlap tests
(the relevance gate, trimming sources for the prompt, attributing an uncited answer, chat's
follow-up detection)."""

from __future__ import annotations

import functools
import re
import unicodedata

WORD = re.compile(r"[a-z0-9]+")
# Typeset PDFs give "fi", "fl", "ff" ... as one character each (U+FB00-FB06): ``text.translate``
# with this reads them as their letters, so "classiﬁcation" is the word "classification".
LIGATURES = {c: unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
# Function words: the question's frame ("how long should the shot take"), not its subject. A
# note that happens to say "should" is no closer to the answer.
_STOP = frozenset(
    "a about above after an and any are as at be been being by can could did do does during each for from had "
    "has have how i if in into is it its many me might much must my of off on onto or our out over shall "
    "should since so some than that the their them then through under until upon "
    "take takes taken took there these they this those to us was we were what when where which who "
    "whom whose why will with would you your yours".split())
# "What did I write about channeling?", "remind me what the RB-75 is", "which of my notes mention the
# Comandante?": asking what the notes hold, in words (write, note, remind, mention) that are no part of
# what is asked about. Searched as words, "note" found the Notes on Karpukhin before the Espresso note's
# channeling, and "remind" and "mention" were named as words no note uses, and the question refused.
# Taken off where a question comes in (``without_notes_frame``: the search, the answer pipeline),
# not in ``query_terms``, which reads every note's text too (140 µs a 1,500-character chunk).
NOTES_FRAME = re.compile(
    r"\b(?:what\s+(?:did|do|have|had)|anything\s+(?:(?:did|do|have|had)\s+)?)\s*(?:i|we)\s+(?:ever\s+)?(?:write|"
    r"wrote|written|note|noted|jot|jotted|say|said|record|recorded|save|saved|keep|kept|put|know|knew|learn|learned|"
    r"learnt|read|have|got)(?:\s+down)?\s+"
    r"(?:about|on|regarding)\b|\bwhat\s+do\s+(?:my|our)\s+notes\s+say\s+(?:about|on)\b|"
    r"\b(?:what'?s|what\s+is|anything)\s+in\s+(?:my|our)\s+notes\s+(?:about|on)\b|"
    r"\b(?:which|what)\s+(?:of\s+)?(?:my\s+|our\s+)?notes?\s+(?:mention(?:s|ed)?|talks?\s+about|says?|covers?|"
    r"discuss(?:es)?|refers?\s+to)\b|"
    r"\b(?:tell|remind|show|give)\s+(?:me|us)(?:\s+(?:about|of))?\b|^\W*(?:please\s+)?(?:summari[sz]e|recap)\b", re.I)


def without_notes_frame(text: str) -> str:
    """The question without the words asking what the notes hold ("what did I write about")."""
    return " ".join(NOTES_FRAME.sub(" ", text).split()) or text


# "how long", "how many": the words asking for a figure, not what the figure is of; "what went
# wrong", "what did the bake get wrong", "what was the problem with": asking for a fault, which a note
# tells in its own words ("the crust too pale")
_ASKING = re.compile(r"\bhow (?:long|many|much|often|far)\b|"
                     r"\b(?:went|goes|go|going|doing|did|done|is|was|s|get|gets|got|getting) wrong\b|"
                     r"\b(?:the|a|any|what) (?:problems?|issues?|trouble) (?:with|was|is)\b|"
                     # "a bunch of files", "lots of notes": how many, said loosely; no note need say "bunch"
                     r"\b(?:a (?:whole )?(?:bunch|lot|couple|handful|heap|ton|load)|lots|tons|loads|heaps) of\b")


def query_terms(text: str) -> set[str]:
    """Content words of a question, crudely stemmed (plural/verb endings)."""
    text = _ASKING.sub(" ", folded(text).lower())
    return {stem(w) for w in WORD.findall(text) if w not in _STOP and len(w) > 1}


def split_words(text: str) -> list[str]:
    """The text's words, lower case, in order (the words ``query_terms`` reads)."""
    return WORD.findall(folded(text).lower())


_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")  # accents, as marks


def folded(text: str) -> str:
    """The text with its accents off: a user types "pasteis de Belem" for the note's "pastéis de
    Belém", which the words above read as "bel" and "m"."""
    return text if text.isascii() else _COMBINING.sub("", unicodedata.normalize("NFKD", text))


# English verbs whose forms no ending rule joins: a note that says "go" uses the word a question says
# as "goes" or "went". Forms that are as often words of their own are left out ("left" the side,
# "saw", "lead", "bound", "wound", "rose", "fell", "spring", "shot" of espresso, "lit", "lay").
_IRREGULAR = (
    "go goes went gone going|do does did done doing|have has had having|make made|get got gotten|give gave given|"
    "find found|think thought|tell told|become became|show shown|feel felt|bring brought|begin began begun|"
    "keep kept|hold held|write wrote written|stand stood|hear heard|mean meant|meet met|run ran|pay paid|"
    "sit sat|speak spoke spoken|grow grew grown|lose lost|send sent|build built|understand understood|"
    "draw drew drawn|break broke broken|spend spent|drive drove driven|buy bought|wear wore worn|"
    "choose chose chosen|seek sought|throw threw thrown|catch caught|deal dealt|win won|forget forgot forgotten|"
    "hide hid hidden|freeze froze frozen|steal stole stolen|teach taught|sell sold|fight fought|eat ate eaten|"
    "drink drank drunk|sing sang sung|shake shook shaken|sleep slept|feed fed|blow blew blown|fly flew flown|"
    "know knew known|see seen|say says said|come came|bend bent|bleed bled|burn burnt|dig dug|flee fled|"
    "forgive forgave forgiven|hang hung|lend lent|ride rode ridden|shrink shrank shrunk|sink sank sunk|"
    "slide slid|spin spun|stick stuck|strike struck|swear swore sworn|sweep swept|swing swung|tear tore torn|"
    "undo undid undone|wake woke woken|weep wept|withdraw withdrew withdrawn|rewrite rewrote rewritten|"
    "overwrite overwrote overwritten|mistake mistook mistaken|arise arose arisen|forbid forbade forbidden")
_FORMS = {form: tuple(verb.split()) for verb in _IRREGULAR.split("|") for form in verb.split()}


def forms(word: str) -> tuple[str, ...]:
    """The word's forms that no ending rule joins to it ("goes": go, went, gone, ...); else itself."""
    return _FORMS.get(word.lower(), (word,))


def stem(word: str) -> str:
    """The word less its plural or verb ending (crudely)."""
    if len(word) > 5 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"  # "properties", "copied": "property", "copy"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            if suffix == "es" and not word.endswith(("ses", "xes", "zes", "ches", "shes")):
                continue  # "tables" is "table" + s, as "boxes" is "box" + es
            return word[: -len(suffix)]
    return word


# A sentence ends at . ! ? followed by space and an upper-case letter, digit, quote or
# backtick; not after common abbreviations or a single initial ("e.g. the", "J. Smith").
_SENTENCE_END = re.compile(
    r"(?<!\b[A-Z])(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)([.!?])\s+(?=[\"'“`(\[A-Z0-9])")


_BOLD_OPENS = re.compile(r"(?:^|(?<=\s))\*\*(?=\S)")


def _in_bold(text: str, at: int) -> bool:
    """Is ``at`` inside a bold span of its line: opened ("**" at a word's start) before it, and
    closed after it on the same line? Not the footnote marks of "gross income** was at least"."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    before, after = text[start:at], text[at:end if end >= 0 else len(text)]
    return before.count("**") % 2 == 1 and bool(_BOLD_OPENS.search(before)) and "**" in after


def split_sentences(text: str, with_offsets: bool = False) -> list:
    """The sentences of a paragraph; with offsets, (sentence, start, end) in ``text``. The one
    splitter that evidence, the checks and question parts all use."""
    result, begin = [], 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end(1)
        if _in_bold(text, end):
            continue  # "**What if ... expires? Will I lose my remote vault data?**" is one question
        if text[begin:end].strip():
            result.append((text[begin:end].strip(), begin, end))
        begin = m.end()
    if text[begin:].strip():
        result.append((text[begin:].strip(), begin, len(text)))
    return result if with_offsets else [r[0] for r in result]


# A question that asks for a quantity or a time: a sentence lifting that figure out of a quote
# says something the reader would otherwise have to find, and a passage without one is not it.
# "When" asks a time where it opens a question, a sentence or a clause ("When do I feed it", "I messed
# up a note. When does ...", "..., and when"),
# not in "leave out a word when searching".
# not "when does BM25 beat dense retrieval", "when is it better to ...": in which cases, which no time
# answers (the paper's "2020" was quoted for it)
_ASKS_WHEN = (r"(?:^\W*|[,;]\s*|[.?!:]\s+|\b(?:and|or|but)\s+)when\b"
              r"(?![^?]*\b(?:beats?|wins?|outperforms?|better|worse)\b)")
_ASKS_FIGURE = re.compile(
    r"\b(?:how (?:many|much|long|often|far|big|old|large|small|fast|high|low|hot|cold)|"
    r"what (?:time|temperature|size|year|date|percentage|ratio|amount|number|speed|pressure|weight|"
    r"length|height|depth|distance|cost|price|rate|dose|volume|version|port))\b|" + _ASKS_WHEN, re.I)


# "How can I see how many people visit my site?" asks for a way to see the figure, not the figure.
_A_WAY_TO_SEE = re.compile(r"(?:^\W*|[.?!;:]\s+)(?:how|where)\s+(?:do|can|could|would|should)\s+(?:i|we|you)\s+"
                           r"(?:\w+\s+){0,2}?"
                           r"(?:see|check|count|find|track|measure|show)\s+(?:out\s+)?how\s+(?:many|much|long|often)\b",
                           re.I)


def asks_figure(question: str) -> bool:
    """Does the question ask for a quantity, a time or a date ("how long", "what pressure")?"""
    return bool(_ASKS_FIGURE.search(question)) and not _A_WAY_TO_SEE.search(question)


# What kind of figure a question asks for, and how a passage that holds one reads.
_NUM = (r"(?:\d[\d.,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
        r"thirty|forty|forty-five|fifty|ninety|a few|several|an?)")
# "30 s", "2h" with digits; a number in words needs its space and a whole unit ("as" is not "a s")
_SPAN = (rf"\b{_NUM}\s*(?:(?:-|–|to|or)\s*{_NUM}\s*)?(?:secs?|seconds?|mins?|minutes?|hrs?|hours?|"
         r"days?|weeks?|months?|years?)\b|\b\d[\d.,]*\s*(?:s|h)\b|\b\d{1,2}:\d{2}\b|\bovernight\b")
# "every two months" says how often, not how long (it answers "when"): "how long should it take", of an
# espresso shot, was answered by the grinder's "Clean the burrs every two months"
_DURATION = re.compile(rf"(?<!\bevery )(?<!\bonce )(?:{_SPAN})", re.I)
_TEMPERATURE = re.compile(r"\d\s*°|\d\s*degrees?\b", re.I)
_WHEN = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b(?:1[89]|20)\d{2}\b|"
                   # a date in figures, month or day first: "completed 5/26/16", "26.05.2016" (dotted with
                   # a year of four: "1.12.10" is a version)
                   r"\b\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})\b|\b\d{1,2}\.\d{1,2}\.\d{4}\b|\b(?:jan|feb|mar|apr|may|jun|jul|"
                   r"aug|sep|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:morning|evening|"
                   r"night|noon|midnight|daily|weekly|monthly)\b|"
                   # a release is a time for software: "dropped in Obsidian 1.9", "since v1.4", "as of `1.9.3`"
                   r"\b(?:(?:versions?|since|as of|until|starting in)(?:\s+(?-i:[A-Z])[\w-]*)?|in\s+(?-i:[A-Z])[\w-]*)"
                   r"\s*`?v?\d+\.\d+(?:\.\d+)?\b", re.I)
# "When" asks a time, or the circumstance that brings a thing about: "When must I never open the
# relief valve?" is answered by "Never open the relief valve above 3 bar", "When does Obsidian update
# my links?" by "... when you rename a file", "when do I feed the starter" by "12 hours before". A
# time alone would quote the note's one month ("The annual service is in October") for the first.
# "What time ..." asks a time only.
_CONDITION = (r"\b(?:when(?:ever)?|if|after|before|until|unless|as soon as|once (?:you|the|it|a|an|your))\b|"
              r"\b(?:above|below|over|under|beyond|exceeds?|more than|less than|at least|at most)\s+[\d.]")
_WHEN_OR_CONDITION = re.compile(f"{_WHEN.pattern}|{_SPAN}|{_CONDITION}", re.I)
# A price: an amount in a currency, or free. "How much is it per month" is not answered by "1 GB".
_PRICE = re.compile(r"[$€£¥₹]\s*\d|\d\s*(?:usd|eur|gbp|dollars?|euros?|pounds?|cents?)\b|\bfree\b|"
                    r"\bno (?:extra )?(?:cost|charge)\b", re.I)
# A share: a percentage, or "N out of M". "What share of benefits officers did OPM train" is
# answered by "OPM trained 57 out of 68 ..." and the row's "83.8%", not by the sentences around
# them that share more of its words ("virtual benefits officers training seminars").
_SHARE = re.compile(r"\d\s*(?:%|per ?cent\b)|\b\d[\d,]*\s+out\s+of\s+(?:the\s+)?\d", re.I)
# An amount ("how much salt", "how much is the discount"): a number that is not a time taken.
_AMOUNT = re.compile(r"(?<![\w.])\d[\d.,]*(?![\d.,]*\s*(?:(?:-|–|to|or)\s*\d[\d.,]*\s*)?(?:business\s+|working\s+)?"
                     r"(?:secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?)\b)", re.I)
# A question that asks which keys do something ("what's the shortcut for the command palette", "how do I
# reopen a closed tab from the keyboard") is answered by a unit that names them, "Press `Ctrl+P` (or
# `Cmd+P` on macOS) to open the Command palette", not by the note's sentence about keyboard shortcuts.
# Not one that asks to change a shortcut ("can I change it to my own keys"), nor a shortcut on disk.
_ASKS_KEYS = re.compile(r"^(?!.*\b(?:change|changing|customi[sz]e|remap|rebind|reassign|assign|my own)\b)"
                        r".*(?:\b(?<!file )(?<!filesystem )(?<!desktop )short ?cuts? (?:to|for|that|key)\b|"
                        r"\bwhat(?:'s| is| are)? the (?:keyboard )?(?:short ?cuts?|hot ?keys?)\b|"
                        r"\bhot ?keys? (?:to|for|that)\b|\bkey (?:combination|combo|binding)s? (?:to|for)\b|"
                        r"\b(?:which|what) keys?\b|\b(?:from|with|using) the keyboard\b)", re.I | re.S)
# The words that ask for keys, not what the keys are to do (``holds_figure``).
_KEY_WORDS = frozenset({"keyboard", "key", "shortcut", "hotkey", "hot", "combination", "combo", "press", "binding"})
# Keys as notes write them: a modifier joined to a key, the Mac's symbols, or a modifier named as code
# ("press `Ctrl` and select the link"). A key alone ("press `Enter`") ends a procedure as often.
_KEYS = re.compile(r"\b(?:Ctrl|Control|Cmd|Command|Alt|Option|Opt|Shift|Meta|Mod|Win|Super)\s*(?:\+|/\s*(?:Ctrl|Cmd))"
                   r"|[⌘⌥⇧⌃]|`(?:Ctrl|Control|Cmd|Command|Alt|Option|Shift|Meta)`")
# A quantity a question names, and the units a note gives it in: "what voltage is the valve" is
# answered by "24 V AC", "what pressure ..." by "1.7 bar (25 psi)", as a temperature by "60 °C".
MEASURES = (("voltage|volts?", "v|volts?|kv|mv"), ("pressure", "bar|psi|kpa|pa|atm|mbar"),
            ("weight|weigh|weighs|mass", "g|kg|grams?|kilograms?|lbs?|pounds?|oz|ounces?"),
            ("wattage|power|watts?", "w|watts?|kw"))
_ANSWER_TYPES = ((re.compile(r"\bhow much\b(?:\W+\w+){0,6}?\W+(?:cost|costs|pay|charge|charged|per (?:month|year))\b|"
                             r"\bwhat(?:'s| is| does)?(?:\W+\w+){0,3}?\W+(?:cost|price)\b", re.I), _PRICE),
                 (re.compile(r"\bhow long\b|\bhow many (?:minutes|seconds|hours|days|weeks)\b|"
                             r"\bhow much (?:time|longer)\b", re.I), _DURATION),
                 (re.compile(r"\bhow much\b", re.I), _AMOUNT),
                 (re.compile(r"\btemperature\b|\bhow (?:hot|cold|warm)\b", re.I), _TEMPERATURE),
                 *((re.compile(rf"\b(?:{asks})\b", re.I), re.compile(rf"\d\s*(?:{unit})(?![\w°])", re.I))
                   for asks, unit in MEASURES),
                 (re.compile(_ASKS_WHEN, re.I), _WHEN_OR_CONDITION),
                 (re.compile(r"\bwhat (?:time|date|year|day)\b", re.I), _WHEN),
                 (re.compile(r"\bwhat (?:share|percentage|percent|proportion|fraction)\b", re.I), _SHARE),
                 (_ASKS_KEYS, _KEYS))


@functools.lru_cache(maxsize=256)  # asked again for every unit a question's evidence scores
def answer_type(question: str) -> re.Pattern[str] | None:
    """For a question that asks a price, a duration, an amount, a temperature or a time: what its answer
    looks like."""
    for asks, looks in _ANSWER_TYPES:
        if asks.search(question):
            return looks
    return None


# A question that asks a cause ("why did X change", "what slowed X"), and the words a passage
# gives one with. Reports state their reasons in a few set phrases ("primarily due to", "driven
# by", "as a result of", "offset by"); the sentence around the figure that only restates it
# ("engagement stayed at 71%") is no answer to "why".
_ASKS_REASON = re.compile(r"^\W*why\b|[,;]\s*why\b|[.?!:]\s+why\b|"
                          r"\bwhat (?:caused|causes|led to|leads to|slowed|slows|drove|drives|"
                          r"explains?|is the reason|was the reason)\b|\bfor what reason\b|\bhow come\b", re.I)
_GIVES_REASON = re.compile(r"\b(?:because|due (?:primarily |mainly |largely |partly |in part )?to(?! be\b)|driven by|"
                           r"as a (?:direct )?result of|"
                           r"result(?:s|ed)? (?:from|of|in)|owing to|attribut(?:ed|able) to|caused by|offset by|"
                           r"to reflect|in response to|in light of|"
                           r"led to|leading to|the reason|reasons? (?:for|why|is|was)|on account of|"
                           r"in (?:order|an effort) to|so that|thanks to|"
                           # a purpose is a reason: "It is a safeguard to ensure you don't end up with duplicated files"
                           r"to (?:ensure|make sure|avoid|prevent)|safeguard)\b", re.I)


# A question that asks what there is to choose from ("what are the ways to sync my notes?", "what
# callout types are there?", "which formats are supported?"): a list or a table answers it whole,
# not the one item that shares most of its words.
_ASKS_LIST = re.compile(
    r"\bwhat (?:\w+ )?(?:kinds|types|sorts|ways|options|methods|choices|formats|modes|views)\b"
    r"(?! of \w+ (?:is|does)\b)|"
    r"\b(?:what|which) (?:\w+ ){1,3}(?:are there|exist|are (?:supported|available)|(?:does|can) (?:it|obsidian|\w+) "
    r"(?:support|open|read|import|use))\b|"
    r"\bwhat are (?:the|my|all the) (?:different |available |supported )?\w+\b(?= (?:to|for|of|that|i can)\b)|"
    r"\b(?:list|name) (?:the|all)\b|\bwhat are the different\b|"
    # "what actions can an obsidian:// link trigger?", "which AI providers does Interpreter support?":
    # things (a plural) that can or do
    r"\b(?:what|which) (?:\w+ ){0,2}\w{3,}[^s\W']s (?:can|could|does|do|are|will|would)\b|"
    # "what do I need to buy for the irrigation?": the things needed, not a step ("to do")
    r"\bwhat (?:do|does|will|would) (?:i|we|you|it) need\b(?! to (?:do|know)\b)", re.I)


_HOW = re.compile(r"\bhow (?:do|can|should|would|could) (?:i|you|we|one)\b|\bhow to\b|\bwhat(?:'s| is) the "
                  r"(?:syntax|command|shortcut|code)\b|\bstep by step\b|\bwalk (?:me|us) through\b|"
                  r"\bwhat (?:are|were) the steps\b|\bwhat do (?:i|we) need\b|"
                  # "... came through totally blank. what do i do?": the steps that mend it
                  r"\bwhat (?:do|should|can|must) (?:i|we) do(?: now| next| about (?:it|this|that))?\W*$|"
                  r"\bwhat(?:'s| is) the (?:best|fastest|easiest|quickest|simplest|right) way to\b|"
                  r"\bis there (?:a|an|any) (?:way|option|setting) to\b", re.I)


def asks_how(question: str) -> bool:
    """Does the question ask how to do something (a procedure answers it)?"""
    return bool(_HOW.search(question))


# Where what the asker tells ends and a question begins: "I'm putting out a lib — is it ok ...?", "Our
# admins are asking: which port ...?", "I have two monitors; can I ...?" (a time's colon ends nothing)
CLAUSE_END = r"(?:[,;]|:\s|\s*[—–]|\s-\s)"
# A question asking whether ("Can I ...?", "Does Obsidian ...?", "..., or does it have to ...?")
_ASKS_WHETHER = re.compile(rf"^\W*(?:can|could|does|do|is|are|will|would|should|may|must|has|have)\b|"
                           rf"{CLAUSE_END}\s*(?:or\s+)?(?:can|could|does|do|is|will|would)\s+(?:i|it|we|you|they)\b",
                           re.I)


def asks_whether(question: str) -> bool:
    return bool(_ASKS_WHETHER.search(question))


def asks_list(question: str) -> bool:
    """Does the question ask what there is of a kind (the ways, the types, the formats)?"""
    return bool(_ASKS_LIST.search(question)) and answer_type(question) is None


def asks_reason(question: str) -> bool:
    """Does the question ask why something is so (a cause, a reason)?"""
    return bool(_ASKS_REASON.search(question))


def gives_reason(text: str) -> bool:
    """Does the text state a cause in words that say it is one ("due to", "driven by")?"""
    return bool(_GIVES_REASON.search(text))


# A figure said in words: "every two months", "twice a day", "in May", "daily".
_FIGURE_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"hundred|thousand|million|dozen|half|quarter|once|twice|daily|weekly|monthly|yearly|annually|hourly|"
    r"nightly|january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter)\b", re.I)


def holds_figure(text: str, question: str = "", heading: str = "") -> bool:
    """Does the text state the figure the question asks for: one of its kind (a duration for
    "how long", see answer_type), or else any quantity, time or date, in digits or in words?
    Keys must be said of what the question asks them to do, in the text or its ``heading``:
    "Select all: `Ctrl+A`" is no answer to "the shortcut to open Search"; "Or, press `Shift+1`"
    under "Zoom to fit" is one to "zoom so that everything is visible"."""
    kind = answer_type(question)
    if kind is _KEYS:
        return bool(kind.search(text)) and bool(query_terms(question) - _KEY_WORDS & query_terms(f"{heading} {text}"))
    if kind is not None:
        return bool(kind.search(text))
    return bool(re.search(r"\d", text) or _FIGURE_WORDS.search(text))


# "... without signing in to my Microsoft account?": what the asker wants to do without. The note's
# sentence that says it needs none ("so it needs no Microsoft account") answers, not the steps
# that sign in, which share the same words.
_WITHOUT = re.compile(r"\bwithout\s+([^,;?.!]+)", re.I)
_NEGATES = re.compile(r"\b(?:no|not|never|without|none|neither|nor)\b|n't\b", re.I)


def done_without(question: str) -> set[str]:
    """The content words of what the question asks to do without ("without paying": {"pay"})."""
    m = _WITHOUT.search(question)
    return query_terms(m.group(1)) if m else set()


_VERDICT = re.compile(r"(?:^|[.!?]\s+|^\W*\d+\.\s*)(?:Yes|No)\b|\b(?:[Dd]o not|[Dd]on't|cannot|can't|must not|never|"
                      r"not (?:possible|supported|available|allowed|recommended))\b")


def says_verdict(text: str) -> bool:
    """Does the text say yes or no, or what cannot or must not be done?"""
    return bool(_VERDICT.search(text))


def says_without(text: str, spared: set[str]) -> bool:
    """Does the text deny one of ``spared`` (``done_without``): "without signing in to my Microsoft
    account" is answered by "Does not require an account", "never connects to Microsoft"."""
    return bool(spared) and bool(_NEGATES.search(text)) and bool(query_terms(text) & spared)
