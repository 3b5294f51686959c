# reorder_3/4 as orders of three/four 2-event chains (setters W a, W b; checker R a, R b):
# counts the schedules, the buggy ones, and the 3- and 4-tuples whose order forces the bug
# (none: no fixed tuple of events decides it). python3 reorder_tuples.py
import itertools
# events: setters i: ('Wa',i),('Wb',i); checker ('Ra',),('Rb',)
def lins(chains):
    # all interleavings of chains
    if all(len(c)==0 for c in chains): yield []; return
    for i,c in enumerate(chains):
        if c:
            rest=[x if j!=i else x[1:] for j,x in enumerate(chains)]
            for l in lins(rest): yield [c[0]]+l
def bug(s):
    a=b=0; ra=rb=None
    for e in s:
        if e[0]=='Wa': a=1
        elif e[0]=='Wb': b=-1
        elif e[0]=='Ra': ra=a
        elif e[0]=='Rb': rb=b
    return not ((ra==0 and rb==0) or (ra==1 and rb==-1))
for n in [2,3]:
    chains=[[('Wa',i),('Wb',i)] for i in range(n)]+[[('Ra',),('Rb',)]]
    L=list(lins(chains)); ev=[e for c in chains for e in c]
    print(n,'setters:',len(L),'schedules, buggy',sum(map(bug,L)))
    for d in [3,4]:
        forcing=[]
        for t in itertools.permutations(ev,d):
            hit=[s for s in L if all(s.index(t[i])<s.index(t[i+1]) for i in range(d-1))]
            if hit and all(bug(s) for s in hit): forcing.append(t)
        print(' depth',d,'forcing tuples:',len(forcing), forcing[:4])
