// A uPlot line chart over bucket time (x in seconds).

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { StageSeries } from '../lib/stats';

export function Plot({ title, data, unit, testid, xRange }: { title: string; data: StageSeries; unit: string; testid: string; xRange?: [number, number] | null }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const width = Math.max(320, el.clientWidth - 4);
    const plot = new uPlot(
      {
        title,
        width,
        height: 230,
        series: [
          {},
          ...data.series.map((s) => ({ label: s.label, stroke: s.color, width: 1.6, dash: s.dash, spanGaps: false, points: { show: data.x.length < 40 } })),
        ],
        axes: [{}, { label: unit, size: 56 }],
        scales: { x: xRange ? { time: true, range: () => xRange } : { time: true } },
        legend: { live: true },
        // The x range uPlot settles on, in seconds (tests check one day spans a day, not years).
        hooks: {
          setScale: [(u: uPlot, key: string) => {
            if (key === 'x') {
              el.dataset.xMin = String(u.scales.x.min ?? '');
              el.dataset.xMax = String(u.scales.x.max ?? '');
            }
          }],
        },
      },
      [data.x, ...data.series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [data, title, unit, xRange]);
  return <div class="plot" ref={ref} data-testid={testid} />;
}
