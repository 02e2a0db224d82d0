"""The password policy: one check, used wherever a password is set (users API, `myapp create-user`,
the first admin of `myapp init`).

At least 12 characters (at most 256), not the username (nor the username with a few characters
around it), and not a common password: the list below is checked ignoring case, spaces, and digits or
symbols added at either end ("Password2024!" is "password"). Longer passphrases are what the length
rule asks for; no character-class rules (NIST SP 800-63B).
"""
from __future__ import annotations

import re

from .errors import FieldError

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


def check_password(password: str, username: str) -> None:
    """Raise FieldError('password', why) unless password meets the policy."""
    if len(password) < MIN_LENGTH:
        raise FieldError("password", f"must be at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise FieldError("password", f"must be at most {MAX_LENGTH} characters")
    flat, name = normal(password), normal(username)
    if name and (flat == name or stem(flat) == name or (len(name) >= 4 and name in flat
                                                          and len(flat) - len(name) < 6)):
        raise FieldError("password", "must not be (or contain little more than) the username")
    if flat in COMMON or stem(flat) in COMMON or len(set(flat)) <= 2:
        raise FieldError("password", "is too common (a well-known password); choose a longer passphrase")
