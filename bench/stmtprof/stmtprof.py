"""Sums stmtprof.sh's uprobe events per kind of statement.

Reads `perf script -F tid,time,event,trace` lines: xs_in (a statement's
first 192 bytes as 24 little-endian words), then per thread the entry and
return of pe (prepare), pp (pending) and ex (execute). Prints, per kind,
the seconds spent preparing and executing and the number of prepares,
largest first. Usage: stmtprof.py EVENTS [TOP]
"""
import collections
import re
import struct
import sys

EVENT = re.compile(r'^\s*(\d+)\s+([\d.]+):\s+\S+:(\w+)_(in|out):(.*)$')
WORD = re.compile(r'w\d+=0x([0-9a-f]+)')


def kind(words):
    """The statement's first comment line, else its first 80 characters."""
    text = b''.join(struct.pack('<Q', int(w, 16)) for w in words)
    text = text.split(b'\0')[0].decode('utf-8', 'replace').strip()
    first = text.split('\n')[0]
    if first.startswith('--'):
        return first[:80]
    lines = [x.strip() for x in text.split('\n')]
    return ' '.join(x for x in lines if x and not x.startswith('--'))[:80]


def main():
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    current, started = {}, {}
    prep, run, calls = collections.Counter(), collections.Counter(), collections.Counter()
    with open(sys.argv[1], errors='replace') as f:
        for line in f:
            m = EVENT.match(line)
            if not m:
                continue
            tid, t, name, edge, rest = m.group(1), float(m.group(2)), m.group(3), m.group(4), m.group(5)
            if name == 'xs' and edge == 'in':
                current[tid] = kind(WORD.findall(rest))
            elif edge == 'in':
                started[(tid, name)] = t
            elif name != 'xs' and (tid, name) in started:
                spent = t - started.pop((tid, name))
                k = current.get(tid, '?')
                if name == 'pe':
                    prep[k] += spent
                    calls[k] += 1
                else:
                    run[k] += spent
    total = collections.Counter({k: prep[k] + run[k] for k in set(prep) | set(run)})
    print('total prepare %.2f s, execute %.2f s, %d statements' % (sum(prep.values()), sum(run.values()), sum(calls.values())))
    for k, v in total.most_common(top):
        print('%7.2f  prep %6.2f exec %6.2f n=%6d  %s' % (v, prep[k], run[k], calls[k], k))


main()
