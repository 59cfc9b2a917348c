"""Exact Poisson sampling, fast for 8-bit images, by inverting tabulated CDFs.

tf.random.stateless_poisson costs about 100 ns per sample on one core of the
2-core CPU, whatever the rate; at two noisy copies per crop that made Poisson
the one corruption whose input pipeline cost training more than 5%
(docs/performance.md). Training crops are 8-bit, so within one image a pixel's
rate lam * v / 255 takes one of only 256 values. For each (image, level v) we
tabulate the Poisson CDF once per batch and turn one uniform per sample into a
count by inversion: a guide table (Chen and Asau, 1974) gives the count, or a
count below it, for a uniform's bucket, and one comparison with the table
confirms or raises it. Samples that need more than one step (about 1 in 80
at rates up to 50, mostly in a row's tails, where the first and last buckets
span many counts) get a binary search of their row.

Accuracy: the CDF is formed from float64 log-probabilities and rounded to
float32 (within 5e-7 of exact); the uniforms are float32 on a 2**-23 grid, the
same resolution tf.random.stateless_uniform gives every other corruption. Rows
stop where the remaining tail has probability below 2**-24, which no uniform
on that grid can reach.
"""

import math

import tensorflow as tf

# Above this rate a table row (about rate + 6 sqrt(rate) + 14 entries) costs
# more than TensorFlow's own sampler saves.
MAX_TABLE_RATE = 100.0
# Uniform buckets per table row. 64 keeps the guide cheap to build (searchsorted
# over R x 64 points) while leaving about 1 sample in 10 needing a second
# comparison and 1 in 80 a search of its row.
GUIDE_BUCKETS = 64
LEVELS = 256
# How far (in 0-255 units) a value may sit from an 8-bit level and still count
# as one; float32 rounding of v / 255 * 255 stays below 2e-5.
_GRID_TOLERANCE = 1e-3


def table_length(max_rate):
  """Entries per CDF row so that P(X >= length - 1) < 2**-24 for rates <= max_rate.

  The uniforms lie on a 2**-23 grid below 1, so none can fall in a tail that
  small: cutting rows there changes no sample. Chernoff: P(X >= m + t) <=
  exp(-t^2 / (2 (m + t / 3))) < 2**-24 for t = 6 sqrt(m) + 12 at every m >= 0.
  Returns a scalar int32 >= 14.
  """
  max_rate = tf.cast(max_rate, tf.float32)
  return tf.cast(tf.floor(max_rate + 6.0 * tf.sqrt(max_rate) + 14.0), tf.int32)


def poisson_cdf_tables(rates, length):
  """Poisson CDFs, one row per rate.

  Args:
    rates: [R] float32 >= 0.
    length: scalar int32, entries per row (see table_length).

  Returns:
    [R, length] float32, nondecreasing rows: entry k = P(X <= k) for
    k < length - 1; the last entry is 2 plus the rest of the row's sum, so
    every uniform in [0, 1) inverts to a count below length and the tail
    beyond the row goes to its last count.
  """
  counts = tf.range(length - 1, dtype=tf.float64)
  rates = tf.cast(rates, tf.float64)
  # log P(k) = [log m, -m, 1] . [k, 1, -log k!] as one float64 product of inner
  # size 3: k log m reaches several hundred, so in float32 every probability
  # would be off by ~1e-5. The tiny floor makes rate 0 give P(0) = 1 without
  # 0 * log(0) = nan. The last column is [0, 0, log 2], for the 2 added there.
  per_rate = tf.stack([tf.math.log(tf.maximum(rates, 1e-300)), -rates,
                       tf.ones_like(rates)], axis=1)
  per_count = tf.concat([
      tf.stack([counts, tf.ones_like(counts), -tf.math.lgamma(counts + 1.0)]),
      tf.constant([[0.0], [0.0], [math.log(2.0)]], tf.float64)], axis=1)
  pmf = tf.exp(tf.cast(per_rate @ per_count, tf.float32))
  # A product with an upper-triangular matrix of ones: 3x faster here than
  # tf.cumsum along the last axis, and within 5e-7 of the float64 sum. (Summing
  # blocks, then block totals, is faster still, but where the two sums meet the
  # rows can step down by a rounding error, and inversion needs them sorted.)
  return pmf @ tf.linalg.band_part(tf.ones([length, length]), 0, -1)


def guide_table(cdf, buckets=GUIDE_BUCKETS):
  """Where inversion starts, per row and uniform bucket.

  Args:
    cdf: [R, K] float32 nondecreasing rows (see poisson_cdf_tables).
    buckets: int, the uniform range [0, 1) is split into this many equal buckets.

  Returns:
    [R, buckets] int32; entry j = #{k : cdf[k] <= j / buckets}, the smallest
    count a uniform in bucket j can invert to.
  """
  grid = tf.range(buckets, dtype=tf.float32) / buckets
  grid = tf.broadcast_to(grid, [tf.shape(cdf)[0], buckets])
  return tf.searchsorted(cdf, grid, side='right', out_type=tf.int32)


def invert_cdf_tables(cdf, guide, rows, uniforms):
  """Inversion: count i = #{k : cdf[rows[i], k] <= uniforms[i]}.

  Args:
    cdf: [R, K] float32 from poisson_cdf_tables.
    guide: [R, G] int32 from guide_table(cdf, G).
    rows: [N] int32 in [0, R), the table row of each sample.
    uniforms: [N] float32 in [0, 1).

  Returns:
    [N] int32 counts in [0, K).
  """
  buckets = guide.shape[1]
  length = tf.shape(cdf)[1]
  flat_cdf = tf.reshape(cdf, [-1])
  guided = tf.gather(tf.reshape(guide, [-1]),
                     rows * buckets + tf.cast(uniforms * buckets, tf.int32))
  starts = rows * length + guided
  stepped = tf.gather(flat_cdf, starts) <= uniforms
  # Only the few samples that stepped (about 1 in 10) can need another step:
  # check them once more, and binary-search the whole row for the rarer ones
  # (about 1 in 80, mostly in a row's tails) that still do. Updating only those
  # keeps the scatter, which costs ~30 ns per update, small.
  pending = tf.cast(tf.where(stepped)[:, 0], tf.int32)
  again = (tf.gather(flat_cdf, tf.gather(starts, pending) + 1)
           <= tf.gather(uniforms, pending))
  searched = tf.boolean_mask(pending, again)
  found = tf.searchsorted(tf.gather(cdf, tf.gather(rows, searched)),
                          tf.gather(uniforms, searched)[:, tf.newaxis],
                          side='right', out_type=tf.int32)[:, 0]
  counts = guided + tf.cast(stepped, tf.int32)
  return tf.tensor_scatter_nd_update(counts, searched[:, tf.newaxis], found)


def sample_poisson_8bit(codes, rates_per_unit, seed):
  """Poisson counts for 8-bit images by table inversion.

  Args:
    codes: [B, H, W, C] int32 in [0, 255]; the image is codes / 255.
    rates_per_unit: [B] float32 >= 0, expected count at intensity 1.
    seed: [2] int32 stateless seed.

  Returns:
    [B, H, W, C] float32 counts, Poisson(rates_per_unit[b] * (codes / 255)).
  """
  count = tf.shape(codes)[0]
  # lam * (v / 255): the general path's lam * x, to within float32 rounding of x.
  rates = rates_per_unit[:, tf.newaxis] * (tf.range(LEVELS, dtype=tf.float32) / 255.0)
  cdf = poisson_cdf_tables(tf.reshape(rates, [-1]), table_length(tf.reduce_max(rates)))
  rows = tf.reshape(tf.range(count)[:, tf.newaxis, tf.newaxis, tf.newaxis] * LEVELS + codes,
                    [-1])
  uniforms = tf.random.stateless_uniform(tf.shape(rows), seed)
  counts = invert_cdf_tables(cdf, guide_table(cdf), rows, uniforms)
  return tf.reshape(tf.cast(counts, tf.float32), tf.shape(codes))


def sample_poisson(images, rates_per_unit, seed):
  """Poisson counts with means rates_per_unit * images, exact for any input.

  Uses table inversion when every value is an 8-bit level (v / 255 up to
  float rounding, as training crops and 8-bit evaluation images are) and no
  rate exceeds MAX_TABLE_RATE; otherwise tf.random.stateless_poisson. The two
  paths draw from the same distribution (rates agree to float32 rounding) but
  different random streams.

  Args:
    images: [B, H, W, C] float32; negative values count as 0.
    rates_per_unit: [B] float32 >= 0.
    seed: [2] int32 stateless seed.

  Returns:
    [B, H, W, C] float32 counts.
  """
  rates_per_unit = tf.cast(rates_per_unit, tf.float32)
  scaled = images * 255.0
  codes = tf.round(scaled)
  # Within float rounding of v / 255 (however it was divided: grappler turns
  # x / 255 into x * (1 / 255), which differs in the last bit for half the
  # levels); 16-bit levels off the 8-bit grid are at least 1/257 away. Two
  # reductions check the range for less than clipping every value costs.
  on_8bit_grid = tf.logical_and(
      tf.reduce_max(tf.abs(scaled - codes)) <= _GRID_TOLERANCE,
      tf.logical_and(tf.reduce_min(codes) >= 0.0, tf.reduce_max(codes) <= 255.0))
  use_tables = tf.logical_and(on_8bit_grid, tf.reduce_max(rates_per_unit) <= MAX_TABLE_RATE)

  def with_tensorflow():
    rates = rates_per_unit[:, tf.newaxis, tf.newaxis, tf.newaxis] * tf.maximum(images, 0.0)
    return tf.random.stateless_poisson(tf.shape(images), seed=seed, lam=rates, dtype=tf.float32)

  return tf.cond(use_tables,
                 lambda: sample_poisson_8bit(tf.cast(codes, tf.int32), rates_per_unit, seed),
                 with_tensorflow)
