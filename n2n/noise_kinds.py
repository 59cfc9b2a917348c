"""The kinds of noise the diagnosis tells apart (report.kind_of), and the
structN2V line that hides each kind of line noise: what the methods' choices
read (n2n/methods/), without the diagnosis' numerics."""

INDEPENDENT = 'independent'
CORRELATED = 'correlated'
LINE_KINDS = ('rows', 'columns', 'rows and columns')
KINDS = (INDEPENDENT, CORRELATED) + LINE_KINDS
# The structN2V line that hides each kind of line noise (both: rows, the sCMOS readout's).
LINE_MASKS = {'rows': 'rows', 'columns': 'columns', 'rows and columns': 'rows'}
