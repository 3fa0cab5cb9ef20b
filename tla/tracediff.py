#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Abridge a TLC counterexample: print, for each state, only the variables
that changed since the previous state.  Usage: tracediff.py < tlc-output"""
import re
import sys

def states(text):
    cur = None
    for line in text.splitlines():
        m = re.match(r'^State (\d+): <(\S+)', line)
        b = re.match(r'^Back to state (\d+)', line)
        if m or b:
            if cur:
                yield cur
            cur = {'head': line.strip(), 'vars': {}, 'last': None}
            continue
        if cur is None:
            continue
        if not line.strip():
            cur['last'] = None
        v = re.match(r'^/\\ (\w+) = (.*)$', line)
        if v:
            cur['last'] = v.group(1)
            cur['vars'][v.group(1)] = v.group(2).strip()
        elif cur['last'] and line[:1].isspace() and line.strip():
            cur['vars'][cur['last']] += ' ' + line.strip()
    if cur:
        yield cur

prev = {}
for st in states(sys.stdin.read()):
    print(st['head'])
    for k, val in st['vars'].items():
        if prev.get(k) != val:
            print('   ', k, '=', re.sub(r'\s+', ' ', val))
    if st['vars']:
        prev = st['vars']
