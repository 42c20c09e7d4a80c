"""Puts the tests' helper module on the path (tests import the installed laycert)."""

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng() -> random.Random:
    return random.Random(20)
