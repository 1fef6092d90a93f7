import collections
import sys


def count(text):
    return collections.Counter(text.lower().split())


def main():
    for word, n in count(sys.stdin.read()).most_common(5):
        print(n, word)
