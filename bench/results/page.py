"""docs/results.md from the grid's results.json (bench/results/grid.py writes both).

Every number on the page comes from results.json; the prose says why each row
looks as it does, in terms that hold whatever the numbers of a rerun. A run or
measurement whose commit label is not a plain commit (made from a checkout with
uncommitted changes: bench/provenance.py) carries MARK beside its figures, and
a banner at the top counts them and names the command that remakes them.
"""

from bench import provenance

# Beside each figure of a run that no commit reproduces.
MARK = '\u2020'  # dagger

# Why each corruption's N2N and N2C compare as they do (the paper's section 3).
EXPLANATIONS = {
    'gaussian': (
        'Zero-mean additive noise and an L2 loss: the expected noisy target is the clean image, '
        'so N2N optimises the same function as N2C; its noisier targets only add variance to '
        'the gradients, which at a fixed budget shows as a small gap. The no-clipping run is the '
        'control for the trainer\'s gradient clipping on a corruption without outlier batches.'),
    'poisson': (
        'Poisson noise is zero-mean too (E[Poisson(lambda x) / lambda] = x), so the same holds. '
        'Lambda is drawn from [0.001, 50] as in the paper; near its floor a pixel is 0 or '
        'hundreds. Before the trainer clipped gradient norms, such batches wrecked runs like '
        'these: at the 2400-step demo budget, validation PSNR fell as low as 4 dB mid-run and the runs '
        'ended at 24.67 (N2C) and 25.75 dB (N2N), against 28.49 and 28.42 dB with clipping '
        '(bench/collapse_trace.py, docs/collapse_trace/). "Clipped steps" counts the steps whose '
        'gradient the trainer scaled down.'),
    'text': (
        'Text is not zero-mean: a target pixel is the clean value or a random string colour. With '
        'less than half of the pixels covered, the median of the targets is the clean value, so '
        'L1 (median-seeking) N2N learns the clean image; L2 learns the mean, clean blended with '
        'the average overlay colour, and keeps a tint where text is likely (the L2 ablation). '
        'The N2C run uses the same L1 loss on clean targets. At this budget both leave faint '
        'ghosts of the larger strings; configs/demo_text.cfg trains 4000 steps.'),
    'impulse': (
        'A replaced pixel takes a uniformly random colour, so at p >= 0.5 even the median of the '
        'targets is no longer the clean value; the clean value is still the mode, which the '
        'annealed L0 loss (|error|^gamma, gamma 2 -> 0 over training) seeks. L2 learns (1-p) x + '
        'p/2, a washed-out image (the L2 ablation). The N2C run keeps the annealed L0 loss. '
        'N2N\'s own targets are up to 95% random colours, so each of its steps carries less '
        'signal than one of N2C; at this short budget that is the widest gap in the table.'),
    'scenes': (
        'No synthetic corruption: each training example is two captures of one scene, simulated '
        'from the demo photographs with signal-dependent sensor noise (variance 0.01 x + 0.0004, '
        'clipped, 16-bit; datasets/make_noisy_scenes.py), so N2N never sees a clean pixel and '
        'N2C trains on the references. Validation: the demo validation scenes (first capture '
        'against the reference). Input and target are one stacked crop, so one flip, rotation '
        'and channel order moves both. Without channel permutations (the ablation, and the '
        'pipeline before issue 20) the network learns only the colours of nine photographs and '
        'pulls others towards them. The demo validation scenes cannot show it, since their '
        'colours are those of the training photographs (compare the ablation table with the '
        'colour check below): that is what chooses the default, permutations on.'),
    'bernoulli': (
        'A dropped target pixel carries no information, so the loss is L2 over the target\'s kept '
        'pixels only. At p drawn from [0, 0.95] about half of the target pixels are dropped on '
        'average, so N2N sees about half the supervision per step of N2C (whose clean target '
        'keeps every pixel); the table shows what that costs at this budget.'),
}


def _mark(*runs):
  """' MARK' when any of runs (result dicts with a 'commit'; None skipped) was
  made at no clean commit, else ''."""
  unreproducible = any(run and not provenance.is_reproducible(run.get('commit'))
                       for run in runs)
  return f' {MARK}' if unreproducible else ''


def _fmt(value, digits=2):
  return f'{value:.{digits}f}'


def _minutes(seconds):
  return f'{seconds / 60:.1f} min'


def _level_name(tag):
  if '_' not in tag:
    return tag  # 'captures': real captures have no level
  noise, level = tag.split('_', 1)
  return {'gaussian': f'sigma {level}', 'poisson': f'lambda {level}',
          'text': f'p {level}', 'impulse': f'p {level}', 'bernoulli': f'p {level}'}[noise]


def headline(rows, results):
  """One line: the N2N - N2C gap per corruption at its first level."""
  parts = []
  for row in rows:
    n2n, n2c = results.get(f'{row.name}_n2n'), results.get(f'{row.name}_n2c')
    if not (n2n and n2c):
      continue
    tag = next(iter(n2n['levels']))
    gap = n2n['levels'][tag]['final'] - n2c['levels'][tag]['final']
    parts.append(f'{row.title.split(" (")[0]} {gap:+.2f} dB{_mark(n2n, n2c)}')
  return 'N2N minus N2C at equal budget: ' + ', '.join(parts) + '.'


def _main_table(rows, results):
  lines = ['| corruption | level | loss | input | N2N | N2C | N2N - N2C | steps x batch | '
           'wall time N2N / N2C | images/s N2N / N2C | clipped steps N2N / N2C |',
           '|---|---|---|---|---|---|---|---|---|---|---|']
  for row in rows:
    n2n, n2c = results.get(f'{row.name}_n2n'), results.get(f'{row.name}_n2c')
    if not (n2n and n2c):
      continue
    for tag, scores in n2n['levels'].items():
      clean_target = n2c['levels'][tag]
      lines.append(
          f'| {row.title} | {_level_name(tag)} | {n2n["loss"]} | {_fmt(scores["input"])} | '
          f'**{_fmt(scores["final"])}**{_mark(n2n)} | {_fmt(clean_target["final"])}{_mark(n2c)} | '
          f'{scores["final"] - clean_target["final"]:+.2f} | '
          f'{n2n["train_steps"]} x {n2n["batch_size"]} | {_minutes(n2n["wall_seconds"])} / '
          f'{_minutes(n2c["wall_seconds"])} | {n2n["images_per_second"]:.1f} / '
          f'{n2c["images_per_second"]:.1f} | {n2n["clipped_steps"]} / {n2c["clipped_steps"]} |')
  return '\n'.join(lines)


def _ablation_table(rows, titles, results):
  lines = ['| run | level | loss | PSNR | the row\'s N2N | difference | clipped steps |',
           '|---|---|---|---|---|---|---|']
  for row in rows:
    n2n = results.get(f'{row.name}_n2n')
    for variant in row.ablations:
      run = results.get(f'{row.name}_{variant}')
      if not (run and n2n):
        continue
      for tag, scores in run['levels'].items():
        reference = n2n['levels'][tag]['final']
        lines.append(f'| {row.title}: {titles[variant]}{_mark(run)} | {_level_name(tag)} | '
                     f'{run["loss"]} | {_fmt(scores["final"])} | {_fmt(reference)}{_mark(n2n)} | '
                     f'{scores["final"] - reference:+.2f} | {run["clipped_steps"]} |')
  return '\n'.join(lines)


def _best_table(rows, titles, results):
  lines = ['| run | level | final | best (step) |', '|---|---|---|---|']
  for row in rows:
    for variant in ('n2n', 'n2c') + row.ablations:
      run = results.get(f'{row.name}_{variant}')
      if not run:
        continue
      for tag, scores in run['levels'].items():
        lines.append(f'| {row.title}: {titles[variant]}{_mark(run)} | {_level_name(tag)} | '
                     f'{_fmt(scores["final"])} | {_fmt(scores["best"])} ({scores["best_step"]}) |')
  return '\n'.join(lines)


def _colour_check_runs(rows, titles, results):
  """[(title, run)] of every run that was scored on the colour check."""
  checked = []
  for row in rows:
    for variant in ('n2n', 'n2c') + row.ablations:
      run = results.get(f'{row.name}_{variant}', {})
      if 'colour_check' in run:
        checked.append((f'{row.title}: {titles[variant]}{_mark(run)}', run))
  return checked


def _worst_error(image):
  return max(abs(error) for error in image['colour_error'])


def _colour_summary_table(checked):
  lines = ['| run | images meeting the bar | worst channel error | smallest PSNR gain | '
           'mean PSNR gain |', '|---|---|---|---|---|']
  for title, run in checked:
    images = run['colour_check']
    passed = sum(image['meets_bar'] for image in images)  # bench/colour_check.verdicts
    gains = [image['psnr'] - image['input_psnr'] for image in images]
    worst = max(images, key=_worst_error)
    lines.append(f'| {title} | {passed} of {len(images)} | {_worst_error(worst):.3f} '
                 f'({worst["name"]}) | {min(gains):+.2f} dB | '
                 f'{sum(gains) / len(gains):+.2f} dB |')
  return '\n'.join(lines)


def _colour_image_table(checked):
  names = [image['name'] for image in checked[0][1]['colour_check']]
  lines = ['| image | ' + ' | '.join(title for title, _ in checked) + ' |',
           '|---|' + '---|' * len(checked)]
  for index, name in enumerate(names):
    cells = []
    for _, run in checked:
      image = run['colour_check'][index]
      errors = ', '.join(f'{error:+.3f}' for error in image['colour_error'])
      cells.append(f'{image["input_psnr"]:.2f} -> {image["psnr"]:.2f} ({errors})')
    lines.append(f'| {name} | ' + ' | '.join(cells) + ' |')
  return '\n'.join(lines)


def colour_check_section(rows, titles, results, bar):
  """The colour check: every colour-checked run on saturated colours its
  training photographs lack; [] when no run was checked."""
  checked = _colour_check_runs(rows, titles, results)
  if not checked:
    return []
  out = [
      '## The colour check',
      '',
      'A model trained on nine photographs can learn their colours as part of "clean": a scene '
      'model trained without channel permutations turned saturated greens olive on other '
      'photographs while scoring well on the two validation photographs (issue 20). '
      '`datasets/colour_check/` holds ten photographs in colours the demo set lacks (two '
      'validation photographs with their hues turned, eight grayscale photographs tinted with one '
      'saturated colour each; see its SOURCES.md). Each run is scored on them with its own kind of '
      'noise: scene models on simulated captures of them (the same sensor noise, another seed), '
      'clean-image models at their evaluation level. The bar: every channel\'s mean error '
      f'(output minus clean, 0-1 scale) under {bar:g}, and a PSNR gain, on every image '
      '(`python -m bench.colour_check --model=RUN` checks one run).',
      '',
      _colour_summary_table(checked),
      '',
      'Per image: input -> output PSNR (dB), and the output\'s mean error in R, G, B:',
      '',
      _colour_image_table(checked),
      '',
  ]
  for row in rows:
    picture = results.get(row.name, {}).get('colour_picture')
    if not picture:
      continue
    variants = ' | '.join(titles[variant] for variant in picture['variants'])
    marked = _mark(*(results.get(f'{row.name}_{variant}') for variant in picture['variants']))
    out += [f'![{row.title} on the colour check](results/{row.name}_colour.png)', '',
            f'*{row.title}, {picture["image"]} (colour check), the centre {picture["crop"][2]}x'
            f'{picture["crop"][2]}: noisy | {variants} | clean.*{marked}', '']
  return out


def _final(run):
  """(PSNR at the last step, noisy input PSNR) of a run's first level."""
  level = next(iter(run['levels'].values()))
  return level['final'], level['input']


def _single_image_table(section, single_image, results):
  """PSNR of the four methods at equal steps, equal training time and in float32."""
  variants = single_image.VARIANTS
  titles = single_image.VARIANT_TITLES
  runs = {variant: results.get(f'{section.name}_{variant}') for variant in variants}
  reference = runs[single_image.REFERENCE]
  lines = ['| budget | precision | input | ' + ' | '.join(titles[v] for v in variants)
           + ' | Neighbor2Neighbor - N2N (2 captures) |', '|---|---|---|' + '---|' * len(variants)
           + '---|']

  def row(label, precision, chosen):
    cells = []
    for variant in variants:
      run = chosen.get(variant)
      cells.append('-' if run is None else
                   f'{_final(run)[0]:.2f}' + (f' ({run["train_steps"]} steps)'
                                              if run['train_steps'] != reference['train_steps']
                                              else '') + _mark(run))
    gap = (f'{_final(chosen["n2nb"])[0] - _final(chosen["n2n2"])[0]:+.2f}'
           if chosen.get('n2nb') and chosen.get('n2n2') else '-')
    lines.append(f'| {label} | {precision} | {_final(reference)[1]:.2f} | ' + ' | '.join(cells)
                 + f' | {gap} |')

  timed = dict(runs)
  for variant in single_image.SINGLE_IMAGE_VARIANTS:
    timed[variant] = results.get(f'{section.name}_{variant}_time')
  row(f'equal training time (that of {reference["train_steps"]} steps of N2N)', 'auto', timed)
  row(f'equal steps ({reference["train_steps"]} x {reference["batch_size"]})', 'auto', runs)
  if section.float32_variants:
    row(f'equal steps ({reference["train_steps"]} x {reference["batch_size"]})', 'float32',
        {variant: results.get(f'{section.name}_{variant}_f32')
         for variant in section.float32_variants})
  return '\n'.join(lines)


def _single_image_costs(section, single_image, results):
  """images/s, relative step cost and wall time of the equal-step runs."""
  reference = results[f'{section.name}_{single_image.REFERENCE}']
  lines = ['| method | images/s | time per step / N2N (2 captures) | wall time (incl. '
           'evaluations) |', '|---|---|---|---|']
  for variant in single_image.VARIANTS:
    run = results[f'{section.name}_{variant}']
    lines.append(f'| {single_image.VARIANT_TITLES[variant]}{_mark(run)} | '
                 f'{run["images_per_second"]:.1f} | '
                 f'{reference["images_per_second"] / run["images_per_second"]:.2f}x | '
                 f'{_minutes(run["wall_seconds"])} |')
  return '\n'.join(lines)


def _correlation_table(section, single_image, results):
  lines = ['| run | evaluations | Pearson r (held-out loss, true MSE) | Spearman rho | '
           'held-out loss minus true MSE |', '|---|---|---|---|---|']
  for suffix, budget in (('', 'equal steps'), ('_time', 'equal time'), ('_f32', 'float32')):
    for variant in single_image.SINGLE_IMAGE_VARIANTS:
      run = results.get(f'{section.name}_{variant}{suffix}')
      level = next(iter(run['levels'].values())) if run else {}
      found = level.get('correlation')
      if found:
        lines.append(f'| {single_image.VARIANT_TITLES[variant]}, {budget}{_mark(run)} | '
                     f'{found["evaluations"]} | {found["pearson"]:.3f} | '
                     f'{found["spearman"]:.3f} | {found["offset"]:.5f} |')
  return '\n'.join(lines)


def _goal_line(section, single_image, results):
  gaps = []
  for suffix, budget in (('_time', 'equal training time'), ('', 'equal steps')):
    n2nb = results.get(f'{section.name}_n2nb{suffix}')
    n2n2 = results.get(f'{section.name}_{single_image.REFERENCE}')
    if n2nb and n2n2:
      gaps.append((budget, _final(n2nb)[0] - _final(n2n2)[0], _mark(n2nb, n2n2)))
  if not gaps:
    return ''
  met = all(gap >= -single_image.GOAL_GAP_DB for _, gap, _ in gaps)
  measured = ', '.join(f'{gap:+.2f} dB at {budget}{marked}' for budget, gap, marked in gaps)
  return (f'**Goal: Neighbor2Neighbor within {single_image.GOAL_GAP_DB:g} dB of N2N with two '
          f'captures: {"met" if met else "missed"}** ({measured}).')


def single_image_section(single_image, results):
  """The "One noisy image per scene" section; [] before its runs exist."""
  sections = [section for section in single_image.SECTIONS
              if f'{section.name}_{single_image.REFERENCE}' in results]
  if not sections:
    return []
  out = [
      '## One noisy image per scene',
      '',
      'Most users have one noisy image of each scene. Neighbor2Neighbor (Huang et al. 2021) and '
      'blind-spot training (Noise2Void with N2V2\'s median replacement and network: max-blur '
      'pooling, no top skip connection) train the same U-Net from that one image '
      '(`--method=neighbor2neighbor|blind_spot`). They are compared with Noise2Noise on two '
      'captures of each scene, and with Noise2Clean for reference (the one capture against the '
      'clean photograph; for the simulated captures, either capture against the reference). '
      'Every method sees fixed noisy captures only: with synthetic noise each photograph is '
      'corrupted once and for all (twice for N2N; `--noise_captures`), as a user\'s files are. '
      'Budgets: the equal-step runs share `configs/cpu/base.cfg` (1600 steps of batch 8, '
      '64x64 crops); the equal-time runs give each single-image method the steps its measured '
      'images/s buys in the time N2N took for its 1600 (`--train_steps` changed, so the '
      'learning-rate schedule still completes; evaluations excluded). PSNR on the demo '
      'validation photographs (for the simulated captures, the demo validation scenes against '
      'their references), at the last step.',
      '',
      'The held-out loss is each single-image method\'s own loss on the validation images\' '
      'noisy inputs, the score a user without references has (`held_out_loss/TAG` in '
      'TensorBoard, `n2n/evaluation/held_out.py`); its correlation with the true error over a '
      'run\'s evaluations is listed per run (`bench/reference_free_correlation.py` on any run).',
      '',
  ]
  for section in sections:
    name = section.name
    picture = results.get(name, {}).get('picture')
    equal_steps = _mark(*(results.get(f'{name}_{variant}') for variant in single_image.VARIANTS))
    single = _mark(*(results.get(f'{name}_{variant}')
                     for variant in single_image.SINGLE_IMAGE_VARIANTS))
    out += [
        f'### {section.title}',
        '',
        _goal_line(section, single_image, results),
        '',
        'PSNR in dB:',
        '',
        _single_image_table(section, single_image, results),
        '',
        'What each costs (equal-step runs):',
        '',
        _single_image_costs(section, single_image, results),
        '',
        'The reference-free score against the true error:',
        '',
        _correlation_table(section, single_image, results),
        '',
    ]
    if picture:
      pictured = ' | '.join(single_image.VARIANT_TITLES[variant]
                            for variant in picture['variants'])
      marked = _mark(*(results.get(f'{name}_{variant}') for variant in picture['variants']))
      level = f' at level {picture["level"]:g}' if picture.get('level') is not None else ''
      out += [f'![{section.title}: noisy, {pictured}, clean](results/{name}.png)', '',
              f'*{picture["image"]}{level}, a {picture["crop"][2]}x{picture["crop"][2]} crop at '
              f'row {picture["crop"][0]}, column {picture["crop"][1]}, equal-step runs: noisy | '
              f'{pictured} | clean.*{marked}', '',
              f'![{section.title}: validation PSNR over training](results/{name}_psnr.svg)'
              f'{equal_steps}', '',
              f'![{section.title}: held-out loss over training](results/{name}_held_out.svg)'
              f'{single}', '']
  return out


def _own(run):
  """(PSNR, input PSNR) of a correlated-noise run on its own training captures."""
  return run['own_captures']['psnr'], run['own_captures']['input']


def _largest_colour_shift(images):
  """The largest channel-mean shift over images (colour_error, 0-1 scale), in 1/255."""
  return 255 * max(abs(value) for image in images for value in image['colour_error'])


def _correlated_goal_line(correlated, results):
  measured = correlated.goal(results)
  if measured is None:
    return ''
  best = correlated.VARIANT_TITLES[measured['variant']]
  marked = _mark(results.get(f'{correlated.GOAL_DATASET}_{measured["variant"]}'),
                 results.get(f'{correlated.GOAL_DATASET}_{correlated.REFERENCE}'))
  return (f'**Goal on the camera pipeline: the best single-image method at least '
          f'{correlated.GOAL_GAIN_DB:g} dB over the input: '
          f'{"met" if measured["gain_met"] else "missed"} ({measured["gain"]:+.2f} dB); within '
          f'{correlated.GOAL_GAP_DB:g} dB of N2N on two captures: '
          f'{"met" if measured["gap_met"] else "missed"} ({measured["gap"]:+.2f} dB).** The best '
          f'is {best}, on the photographs it trained on (chosen by the references, which only '
          f'a simulation has).{marked}')


def _diagnosis_table(correlated, results):
  lines = ['| data | from one capture of each (what a single-image user has) | recommended | '
           'from two captures of each (measured) |', '|---|---|---|---|']
  for dataset in correlated.DATASETS:
    found = results.get(dataset.name, {}).get('diagnosis')
    if not found:
      continue

    def read(source):
      lags = ', '.join(f'{x:.2f}/{y:.2f}' for x, y in zip(source['correlation_x'][:2],
                                                         source['correlation_y'][:2]))
      return f'{source["kind"]}; correlation x/y at lags 1, 2: {lags}'

    flags = ' '.join(f'`{flag}`' for flag in found['single']['recommended']
                     if flag != '--noise=none')
    lines.append(f'| {dataset.title} | {read(found["single"])} | {flags} | '
                 f'{read(found["pairs"])} |')
  return '\n'.join(lines)


def _peer_rows(dataset, peers, own_input, val_input):
  """A row per peer (bench/correlated_peers.py's JSON) with scores on dataset."""
  lines = []
  for peer in (peers or {}).get('peers', {}).values():
    scores = peer['datasets'].get(dataset.name)
    if not scores:
      continue
    own, val = scores['own_captures']['psnr'], scores['validation']['psnr']
    lines.append(f'| {peer["title"]}{_mark(peer)} | {scores.get("setting", "-")} | {own:.2f} | '
                 f'{own - own_input:+.2f} | {val:.2f} | {val - val_input:+.2f} | '
                 f'{_largest_colour_shift(scores["own_captures"]["images"]):.1f} | - | '
                 f'{scores["cost"]} |')
  return lines


def _correlated_table(dataset, correlated, results, peers):
  """PSNR on the own captures and the validation scenes, scheme and cost per run."""
  runs = [(variant, results[f'{dataset.name}_{variant}']) for variant in dataset.variants
          if f'{dataset.name}_{variant}' in results]
  reference = results[f'{dataset.name}_{correlated.REFERENCE}']
  counts = results.get(dataset.name, {}).get('scenes', {})
  lines = [f'| method | scheme | own captures ({counts.get("own_captures", "?")}) | gain | '
           f'validation scenes ({counts.get("validation", "?")}) | gain | largest colour shift '
           '(/255) | images/s | cost |', '|---|---|---|---|---|---|---|---|---|']
  own_input = _own(reference)[1]
  val_input = _final(reference)[1]
  lines.append(f'| input (noisy) | - | {own_input:.2f} | - | {val_input:.2f} | - | - | - | - |')
  for variant, run in runs:
    own, _ = _own(run)
    val, _ = _final(run)
    lines.append(f'| {correlated.VARIANT_TITLES[variant]}{_mark(run)} | {run["scheme"]} | '
                 f'{own:.2f} | {own - own_input:+.2f} | {val:.2f} | {val - val_input:+.2f} | '
                 f'{_largest_colour_shift(run["own_captures"]["images"]):.1f} | '
                 f'{run["images_per_second"]:.1f} | {_minutes(run["wall_seconds"])} of '
                 'training |')
  lines += _peer_rows(dataset, peers, own_input, val_input)
  return '\n'.join(lines)


def _ranking(dataset, correlated, results):
  """(the held-out loss's ranking table, one line saying in which runs it ranks)."""
  lines = ['| run | evaluations | Pearson r (held-out loss, true MSE) | Spearman rho |',
           '|---|---|---|---|']
  ranks, fails = [], []
  for variant in dataset.variants:
    run = results.get(f'{dataset.name}_{variant}')
    level = next(iter(run['levels'].values())) if run else {}
    found = level.get('correlation')
    if found and variant in correlated.SINGLE_IMAGE_VARIANTS:
      title = correlated.VARIANT_TITLES[variant]
      lines.append(f'| {title}{_mark(run)} | {found["evaluations"]} | {found["pearson"]:.3f} | '
                   f'{found["spearman"]:.3f} |')
      (ranks if found['spearman'] >= correlated.RANKS_SPEARMAN else fails).append(title)
  if not (ranks or fails):
    return '\n'.join(lines), ''
  verdict = (f'The held-out loss ranks the evaluations as the true error does (Spearman rho at '
             f'least {correlated.RANKS_SPEARMAN:g}) in {len(ranks)} of {len(ranks) + len(fails)} '
             'runs')
  verdict += f'; it stops doing so for {", ".join(fails)}.' if fails else '.'
  return '\n'.join(lines), verdict


def _peers_paragraph(peers):
  """Where the peers' rows come from and how they ran; [] without peers."""
  if not (peers or {}).get('peers'):
    return []
  hosts = sorted({peer['host'] for peer in peers['peers'].values()})
  commits = sorted({peer['commit'] for peer in peers['peers'].values()})
  return [
      'Peers (`bench/correlated_peers.py`, optional extras, never in the tests), scored as the '
      'runs are: BM3D (CBM3D for colour) given the true noise level, the standard deviation of '
      'each capture minus its reference per channel, which only a simulation knows; CAREamics '
      '(`bench/careamics_peer.py`, in its own PyTorch environment) trained on the same first '
      'captures with its own defaults (N2V2; structN2V along rows on the sCMOS data) for the '
      'wall time of n2n\'s blind-spot run of the same kind (unless its cost says otherwise), '
      'its steps given beside it. '
      f'Measured on {"; ".join(hosts)} at commit {", ".join(commits)}.',
      '']


def correlated_section(correlated, results, peers=None):
  """The "Real (spatially correlated) noise" section; [] before its runs exist.

  peers: bench/correlated_peers.py's JSON (classical and CAREamics peers, per
  dataset), or None.
  """
  datasets = [dataset for dataset in correlated.DATASETS
              if f'{dataset.name}_{correlated.REFERENCE}' in results]
  if not datasets:
    return []
  reference = results[f'{datasets[0].name}_{correlated.REFERENCE}']
  out = [
      '## Real (spatially correlated) noise',
      '',
      'Every table above has noise independent from pixel to pixel. A real camera\'s noise is '
      'not: demosaicing, colour correction and JPEG spread each raw pixel\'s noise over its '
      'neighbours, and an sCMOS camera adds an offset to whole rows. The single-image methods '
      'assume the opposite (a blind-spot network predicts a pixel from its neighbours; '
      'Neighbor2Neighbor trains one pixel against its neighbour), so on such noise they keep '
      'much of it. Here they train with and without their correlated-noise schemes '
      '([correlated_noise.md](correlated_noise.md)): pixel-shuffle (AP-BSN) for '
      'Neighbor2Neighbor and blind-spot, structN2V lines for blind-spot on row noise. Where a '
      'config gives no scheme, train.py chooses it from its diagnosis of the training data; the '
      '"scheme" column says what each run trained with.',
      '',
      'Data: two captures of each demo photograph from `datasets/make_noisy_scenes.py` (camera '
      'pipeline: raw shot and read noise, demosaiced, colour-corrected, tone-mapped; the same '
      'saved as JPEG at quality 90; the microscope pipeline: Poisson-Gaussian counts with row '
      'offsets, 16-bit), the clean photograph as reference; the single-image methods see the '
      'first capture only. '
      f'Budget: `configs/cpu/correlated_base.cfg`, {reference["train_steps"]} steps of batch '
      f'{reference["batch_size"]}, {reference["crop_size"]}x{reference["crop_size"]} crops '
      '(pixel-shuffle at stride 2 needs multiples of 128). "Own captures": the first capture of '
      'each training photograph denoised by the finished model, the normal use of a '
      'single-image method (N2C has trained against these references, so its figure there is '
      'a ceiling, not a peer). "Validation scenes": the demo validation photographs, never '
      'trained on, at the last evaluation. Both are scored the same way, at denoise.py\'s '
      'default precision. The sCMOS PSNR is on the scale each capture\'s percentiles set '
      '(`--normalization=percentile`), rounded to 16-bit steps: comparable within its table, '
      'not with the camera\'s 8-bit figures. Largest colour shift: the largest error of a '
      'channel\'s mean over the own captures, which a colour cast would raise. Cost: the '
      'training\'s wall time (a peer\'s: what it says).',
      '',
      *_peers_paragraph(peers),
      _correlated_goal_line(correlated, results),
      '',
      'What `diagnose.py` reads of each dataset\'s training captures, and what it recommends:',
      '',
      _diagnosis_table(correlated, results),
      '',
  ]
  for dataset in datasets:
    name = dataset.name
    picture = results.get(name, {}).get('picture')
    ranking, verdict = _ranking(dataset, correlated, results)
    notes = [note for (dataset_name, _), note in correlated.NO_SCHEME_NOTES.items()
             if dataset_name == name]
    out += [f'### {dataset.title}', '', 'PSNR in dB:', '',
            _correlated_table(dataset, correlated, results, peers), '', *notes,
            *([''] if notes else []),
            'Does the held-out loss (no reference) still rank the evaluations as the true error '
            'does?', '', ranking, '', verdict, '']
    if picture:
      pictured = ' | '.join(correlated.VARIANT_TITLES[variant] for variant in picture['variants'])
      marked = _mark(*(results.get(f'{name}_{variant}') for variant in picture['variants']))
      out += [f'![{dataset.title}: noisy, {pictured}, clean](results/{name}.png)', '',
              f'*{picture["image"]} (validation), a {picture["crop"][2]}x{picture["crop"][2]} '
              f'crop at row {picture["crop"][0]}, column {picture["crop"][1]}: noisy | '
              f'{pictured} | clean.*{marked}', '',
              f'![{dataset.title}: validation PSNR over training](results/{name}_psnr.svg)'
              f'{marked}', '',
              f'![{dataset.title}: held-out loss over training](results/{name}_held_out.svg)'
              f'{marked}', '']
  return out


def tta_section(results):
  """Test-time augmentation's gain and cost per measured run; [] before any."""
  measured = results.get('tta')
  if not measured:
    return []
  lines = ['| run | level | input | plain | with TTA | gain | time with TTA / plain |',
           '|---|---|---|---|---|---|---|']
  for name, result in measured.items():
    for tag, level in result['levels'].items():
      lines.append(f'| {name}{_mark(result)} | {_level_name(tag)} | {level["input"]:.2f} | '
                   f'{level["plain"]:.2f} | {level["tta"]:.2f} | '
                   f'{level["tta"] - level["plain"]:+.2f} | {result["cost"]:.2f}x |')
  gains = [level['tta'] - level['plain'] for result in measured.values()
           for level in result['levels'].values()]
  machines = sorted({result['machine'] for result in measured.values()})
  commits = sorted({result['commit'] for result in measured.values()})
  return [
      '## Test-time augmentation',
      '',
      '`denoise.py --tta` averages the outputs of the 8 flips and rotations of each image. '
      'Each run below is scored on its own validation data without and with it (the same '
      'images, noise and checkpoint), and both are timed on the same images, repetitions '
      f'interleaved (`bench/tta_gain.py`). Gain from {min(gains):+.2f} to {max(gains):+.2f} dB, '
      'median ' + f'{sorted(gains)[len(gains) // 2]:+.2f} dB. Measured on {"; ".join(machines)} '
      f'at commit {", ".join(commits)}. A run missing when this was measured was trained again '
      'from its configuration first: "plain" is the measured checkpoint\'s own PSNR, which can '
      'differ from the tables above (a retrained run lands elsewhere within the run-to-run '
      'spread); the gain compares that one checkpoint with and without TTA.',
      '',
      '\n'.join(lines),
      '',
  ]


def provenance_banner(rows, results, single_image=None, correlated=None):
  """How many runs and TTA measurements no commit reproduces, and the commands
  that remake them from a clean checkout; [] when every one names a commit."""
  runs = {name: run for name, run in results.items() if 'run' in run}
  unreproducible = [name for name, run in runs.items() if _mark(run)]
  measured = results.get('tta', {})
  unmeasured = [name for name, result in measured.items() if _mark(result)]
  if not (unreproducible or unmeasured):
    return []
  groups = [row.name for row in rows] + (
      [section.name for section in single_image.SECTIONS] if single_image else []) + (
      list(correlated.DATASET_NAMES) if correlated else [])
  rerun = [group for group in groups
           if any(name.startswith(f'{group}_') for name in unreproducible)]
  commands = []
  if rerun:
    commands.append(f'`python -m bench.results.grid --retrain --rows={",".join(rerun)}`')
  if unmeasured:
    commands.append('`python -m bench.results.grid --tta`')
  return [
      f'**Not reproducible from a commit: {len(unreproducible)} of the {len(runs)} runs and '
      f'{len(unmeasured)} of the {len(measured)} test-time augmentation measurements were made '
      f'from a checkout with uncommitted changes (their commit reads `<commit>'
      f'{provenance.DIRTY_SUFFIX}`, or is unknown); {MARK} marks each of their figures, and each '
      f'picture, curve or summary that shows one.** To remake them from committed code, from a '
      f'clean checkout: {", then ".join(commands)}.',
      '',
  ]


def _introduction(rows, results, single_image, correlated=None):
  """The title, the provenance banner, the headline gap and the claim the page
  tests."""
  return [
      '# Results: Noise2Noise against clean targets, every corruption, on 2 CPU cores',
      '',
      '*Written by `bench/results/grid.py` from the runs\' own evaluation logs; do not edit by '
      'hand.*',
      '',
      *provenance_banner(rows, results, single_image, correlated),
      f'**{headline(rows, results)}**',
      '',
      'The paper\'s claim (Lehtinen et al. 2018, section 3) is that a network trained on noisy '
      'targets matches one trained on clean targets. Each row below trains the same U-Net twice '
      'from the same pipeline, seed and budget, once with an independently corrupted target '
      '(N2N) and once with the clean image (N2C), and scores both on the demo validation '
      'photographs at the paper\'s evaluation level.',
      '',
  ]


def _setup_section(runs):
  """The shared budget, data, machines and commits of the runs, and the commands
  that remake them."""
  total_seconds = sum(run['wall_seconds'] for run in runs)
  dates = sorted({run['date'] for run in runs})
  commits = sorted({run['commit'] for run in runs})
  machines = sorted({run['machine'] for run in runs})
  first = runs[0]
  return [
      '## Setup',
      '',
      f'- Budget, equal for every run but those of the correlated-noise section (its own, '
      f'stated there): {first["train_steps"]} steps of batch '
      f'{first["batch_size"]}, {first["crop_size"]}x{first["crop_size"]} crops '
      f'({first["train_steps"] * first["batch_size"]:,} crops), Adam at 1e-3 with a cosine '
      'ramp-down over the last 30%, precision `auto` (mixed bfloat16 on CPUs with AVX512-BF16). '
      'Configurations: `configs/cpu/` (`base.cfg` holds the shared budget).',
      '- Training data: the nine demo photographs in `datasets/demo/train` (public domain / CC0, '
      'see `datasets/demo/SOURCES.md`). Validation: the two photographs in `datasets/demo/val`, '
      'with fixed evaluation noise (a pure function of seed, image and level). PSNR as the '
      'official code measures it: output clipped and rounded to 8 bits, mean of per-image PSNRs.',
      '- The numbers are those of the last step (the end of the budget), not the best '
      'evaluation; the best ones are listed at the end of the page.',
      f'- Machine: {"; ".join(machines)}. Run on {", ".join(dates)} at commit '
      f'{", ".join(commits)}.',
      f'- **Whole grid: {len(runs)} runs, {_minutes(total_seconds)} of wall time** (training, '
      'start-up and the evaluations every 200 steps). Wall times and images/s are of one run '
      'each on a shared 2-core machine: they vary by 10-30% between runs of the same '
      'configuration.',
      '',
      'Remake it:',
      '',
      '```bash',
      'python -m bench.results.grid                   # every row (runs/cpu/, then this page)',
      'python -m bench.results.grid --rows=poisson    # one row: its N2N, N2C and ablations',
      'python train.py --flagfile=configs/cpu/poisson_n2n.cfg   # one run on its own',
      '```',
      '',
  ]


def _tables_section(rows, titles, results):
  """The N2N-against-N2C table and the ablations beside it."""
  return [
      '## The table',
      '',
      'PSNR in dB on `datasets/demo/val`; "input" is the noisy input\'s PSNR.',
      '',
      _main_table(rows, results),
      '',
      '## Ablations',
      '',
      _ablation_table(rows, titles, results),
      '',
  ]


def _row_section(row, titles, picture, results):
  """One corruption's explanation, picture and PSNR curves."""
  variants = picture.get('variants', ('n2n', 'n2c'))
  pictured = [titles[variant] for variant in variants]
  pictured_runs = _mark(*(results.get(f'{row.name}_{variant}') for variant in variants))
  curve_runs = _mark(*(results.get(f'{row.name}_{variant}')
                       for variant in ('n2n', 'n2c') + row.ablations))
  level = f' at level {picture["level"]:g}' if picture.get('level') is not None else ''
  return [
      f'## {row.title}',
      '',
      EXPLANATIONS[row.name],
      '',
      f'![{row.title}: noisy, {", ".join(pictured)}, clean](results/{row.name}.png)',
      '',
      f'*{picture["image"]}{level}, a {picture["crop"][2]}x'
      f'{picture["crop"][2]} crop at row {picture["crop"][0]}, column {picture["crop"][1]}: '
      f'noisy | {" | ".join(pictured)} | clean.*{pictured_runs}',
      '',
      f'![{row.title}: validation PSNR over training](results/{row.name}_psnr.svg){curve_runs}',
      '',
  ]


def _best_section(rows, titles, results):
  """Each run's best evaluation, and how the curves were drawn."""
  return [
      '## Best evaluations',
      '',
      'Each run also keeps its best checkpoint by validation PSNR in `MODEL_DIR/best/`.',
      '',
      _best_table(rows, titles, results),
      '',
      'The curves are the runs\' evaluation summaries (`MODEL_DIR/eval`, tag `psnr/...`), read '
      'with TensorFlow\'s event reader and drawn as SVG by `bench/results/svg_plot.py`: no plotting '
      'library.',
      '',
  ]


def render(rows, titles, results, colour_bar=None, single_image=None, correlated=None,
           peers=None, volumes=None, camera=None, real=None):
  """The page's markdown text.

  Args:
    colour_bar: the colour check's channel-error bar the runs were judged by
      (bench/colour_check.MAX_CHANNEL_ERROR), named in its section; each
      image's verdict is stored with it in results.json.
    single_image: bench.results.single_image (its sections, variants and
      titles), for the "One noisy image per scene" section; None leaves it out.
    correlated: bench.results.correlated (its datasets, variants and goal), for
      the "Real (spatially correlated) noise" section; None leaves it out.
    peers: the classical peer's scores on those datasets
      (bench/correlated_peers.py's JSON), or None.
    volumes: the "Volumes and movies" section's lines
      (bench.results.volumes.section), or None.
    camera: the calibrated camera profiles section's lines
      (bench.results.camera_profiles.section), or None.
    real: the real development sets' section's lines (bench.results.real_dev.section),
      or None.
  """
  runs = [run for run in results.values() if 'run' in run]
  if not runs:
    return '# Results\n\nNo run yet: `python -m bench.results.grid`.\n'
  out = _introduction(rows, results, single_image, correlated) + _setup_section(runs)
  out += _tables_section(rows, titles, results)
  for row in rows:
    picture = results.get(row.name, {}).get('picture')
    if picture:
      out += _row_section(row, titles, picture, results)
  out += colour_check_section(rows, titles, results, colour_bar)
  if single_image is not None:
    out += single_image_section(single_image, results)
  if correlated is not None:
    out += correlated_section(correlated, results, peers)
  out += real or []
  out += camera or []
  out += volumes or []
  out += tta_section(results)
  out += _best_section(rows, titles, results)
  return '\n'.join(out)
