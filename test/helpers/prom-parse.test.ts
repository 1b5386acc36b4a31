import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from './prom-parse.js';

const ok = `# HELP x_total A \\\\ help\\nline.
# TYPE x_total counter
x_total{a="q\\"uote",b="back\\\\slash\\nnl"} 3
x_total{a="2"} 1.5e3 1700000000000
# HELP h A histogram.
# TYPE h histogram
h_bucket{le="0.1"} 1
h_bucket{le="1"} 2
h_bucket{le="+Inf"} 2
h_sum 0.6
h_count 2
# TYPE g gauge
g NaN
`;

describe('parsePrometheusText', () => {
  it('reads families, escapes, timestamps and histograms', () => {
    const exp = parsePrometheusText(ok);
    expect(exp.get('x_total')?.help).toBe('A \\ help\nline.');
    expect(sampleValue(exp, 'x_total', { a: 'q"uote', b: 'back\\slash\nnl' })).toBe(3);
    expect(sampleValue(exp, 'x_total', { a: '2' })).toBe(1500);
    expect(sampleValue(exp, 'h_bucket', { le: '+Inf' })).toBe(2);
    expect(exp.get('h')?.type).toBe('histogram');
    expect(sampleValue(exp, 'g')).toBeNaN();
  });

  it.each([
    ['a sample with no family', 'y 1\n'],
    ['a bad metric name', '# TYPE 1x counter\n1x 1\n'],
    ['a bad label name', '# TYPE x counter\nx{1a="v"} 1\n'],
    ['an unquoted label value', '# TYPE x counter\nx{a=v} 1\n'],
    ['a bad escape', '# TYPE x counter\nx{a="\\t"} 1\n'],
    ['a repeated label', '# TYPE x counter\nx{a="1",a="2"} 1\n'],
    ['a duplicate series', '# TYPE x counter\nx{a="1"} 1\nx{a="1"} 2\n'],
    ['a bad value', '# TYPE x counter\nx 1,5\n'],
    ['an interleaved family', '# TYPE x counter\nx 1\n# TYPE y counter\ny 1\nx{a="b"} 1\n'],
    ['TYPE after samples', '# HELP x h\nx 1\n# TYPE x counter\n'],
    ['non-cumulative buckets', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['+Inf bucket != count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
  ])('rejects %s', (_, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
