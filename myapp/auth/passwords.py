"""The password policy: one check, used wherever a password is set (users API, `myapp create-user`,
the first admin of `myapp init`).

At least 12 characters (at most 256); not the username, the e-mail address (or its part before the @)
or the person's name, nor one of them with a few characters around it; not a common password: the list
below is checked ignoring case, spaces, and digits or symbols added at either end ("Password2024!" is
"password"); and still 12 characters once a repeated pattern counts once ("davedave1234" is "dave1234",
"abcabcabcabc" is "abc"). Longer passphrases are what the length rule asks for; no character-class
rules (NIST SP 800-63B).
"""
from __future__ import annotations

import re

from ..errors import FieldError

MIN_LENGTH = 12
MAX_LENGTH = 256

# Common passwords and their stems (from public breach top lists), lowercase, spaces dropped.
WORDS = """
password passw0rd p@ssword p@ssw0rd passwort motdepasse contraseña senha wachtwoord
123456 1234567 12345678 123456789 1234567890 12345678910 123123 123321 654321 111111 000000 112233
121212 123qwe qwe123 1q2w3e 1q2w3e4r 1q2w3e4r5t 1q2w3e4r5t6y 1qaz2wsx 1qazxsw2 zaq12wsx zaq1zaq1
qwerty qwertyuiop qwertyuiopasdfghjkl qwertz azerty asdfgh asdfghjkl zxcvbnm qazwsx qweasdzxc
abc123 abcdef abcdefgh abcdefghijkl abcdefghijklmnop aaaaaa iloveyou iloveyouforever loveyou
letmein letmeinplease welcome welcomehome welcometo changeme changeit default secret secretpassword
admin administrator adminadmin root toor superuser superman batman spiderman starwars pokemon
master masterkey monkey dragon football baseball basketball soccer hockey princess sunshine shadow
trustno1 whatever freedom michael jennifer jordan23 hunter hunter2 ninja mustang charlie
access letmein123 login loginpassword computer internet samsung google myspace facebook linkedin
correcthorsebatterystaple correcthorse thequickbrownfox thequickbrownfoxjumpsoverthelazydog
passwordpassword mypassword yourpassword newpassword oldpassword password1 password12 password123
qwerty123 qwerty1234 qwerty12345 qwerty123456 iloveyou123 admin123 admin1234 administrator1
myapp myappplatform mlplatform platform machinelearning kubernetes
"""
COMMON = frozenset(WORDS.split())


def normal(text: str) -> str:
    return re.sub(r"\s+", "", text.casefold())


def stem(text: str) -> str:
    """The password with digits and symbols at either end dropped: 'Password2024!' -> 'password'."""
    return re.sub(r"^[\W\d_]+|[\W\d_]+$", "", text)


def period(text: str) -> int:
    """The length of the shortest pattern text repeats (at least twice; the last copy may be cut
    short), or its whole length: 'davedave' -> 4, 'dave!dave!dave' -> 5, 'dave' -> 4."""
    for size in range(1, len(text) // 2 + 1):
        if text[size:] == text[:-size]:
            return size
    return len(text)


def resembles(flat: str, identity: str) -> bool:
    """Is the (normalised) password this identity, or little more than it?"""
    name = normal(identity)
    # Every copy of the identity taken out: 'dave1dave1234' for dave1 leaves '234'.
    return bool(name) and (flat == name or stem(flat) == name
                           or (len(name) >= 4 and name in flat and len(flat.replace(name, "")) < 6))


def check_password(password: str, username: str, *, email: str = "", names: tuple[str, ...] = ()) -> None:
    """Raise FieldError('password', why) unless password meets the policy; email and names (first,
    last) are the person's, when known."""
    if len(password) < MIN_LENGTH:
        raise FieldError("password", f"must be at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise FieldError("password", f"must be at most {MAX_LENGTH} characters")
    flat = normal(password)
    local_part = email.rpartition("@")[0]
    full_name = " ".join(n for n in names if n and n != "-")
    for what, identities in (("username", (username,)), ("e-mail address", (email, local_part)),
                             ("name", (full_name, *names))):
        if any(resembles(flat, identity) for identity in identities if identity != "-"):
            raise FieldError("password", f"must not be (or contain little more than) the {what}")
    if flat in COMMON or stem(flat) in COMMON or len(set(flat)) <= 2:
        raise FieldError("password", "is too common (a well-known password); choose a longer passphrase")
    core = stem(flat)
    unique_length = min(period(flat), len(flat) - len(core) + period(core))
    if unique_length < MIN_LENGTH:
        raise FieldError("password", f"repeats a short pattern: counted once it has {unique_length} characters, "
                                     f"fewer than {MIN_LENGTH}; choose a longer passphrase")
