# Builds keeper/tests/fixtures/feed-v1.{jsonl,head} (the demo's feed in the v1 shape: a decision
# row carrying its settlement and write-off inside, no closing rows) from a v2 feed, for
# keeper/tests/record.rs's migration test. Run it after `make demo` changes results/feed.jsonl:
#   python3 script/feed-v1-fixture.py results/feed.jsonl keeper/tests/fixtures/feed-v1.jsonl \
#     keeper/tests/fixtures/feed-v1.head \
#     0x71b8a89644d3b1abccf12521f314a3b5fac2ee89d137e2c7eb8e82a4045789fa
# (the last argument is the first v1 row's `prev`, as the v1 feed had it)
# (needs pycryptodome for keccak). Run on the v2 feed committed before issue 37's batches it
# gave the v1 fixture committed then, byte for byte.
import json, sys
from Crypto.Hash import keccak
def k(b):
    h=keccak.new(digest_bits=256); h.update(b); return '0x'+h.hexdigest()
src, out_path, head_path, first_prev = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
v2=[json.loads(l) for l in open(src)]
closes={}
for r in v2:
    for c in r.get('closes') or []:
        closes.setdefault((c['tx'],c['log_index']),[]).append(r)
strip=lambda c:{kk:v for kk,v in c.items() if kk not in ('prev','kind','chain_id','gate','log_index','market','closes')}
lines=[]; prev=first_prev
for r in v2:
    if r['kind'] not in ('decision','offchain'): continue
    if r['kind']=='decision':
        cl=closes.get((r['tx'],r['log_index']),[])
        s=[c for c in cl if c['kind'] in ('settlement','late_payout')]
        w=[c for c in cl if c['kind']=='write_off']
        n={}
        for kk,v in r.items():
            n[kk]=v
            if kk=='attempted_fill':
                n['settlement']=strip(s[-1]) if s else None
                n['write_off']=strip(w[0]) if w else None
        r=n
    r=dict(r); r['prev']=prev
    line=json.dumps(r,separators=(',',':'),ensure_ascii=False)
    lines.append(line); prev=k(line.encode())
open(out_path,'w').write('\n'.join(lines)+'\n')
open(head_path,'w').write(prev+'\n')
print(len(lines),'rows; head',prev)
