"""Where a bench script's results go: indented JSON, the file rewritten whole each time."""

import json


def write_results(path, results):
  """Writes results (a JSON-serialisable dict) to path, indented by one space, with a
  final newline; writes nothing when path is empty or None (the script prints its
  rows either way). Calling it after every row lets a run stopped part-way keep them."""
  if not path:
    return
  with open(path, 'w') as output:
    json.dump(results, output, indent=1)
    output.write('\n')
