// strokes.mjs — turns 28 x 28 MNIST digits into pen strokes for the demo's canvas.
//
// Each row's runs of dark pixels become one horizontal stroke through the pixel
// centres; drawn with the page's round brush (about 2 MNIST pixels wide) they rebuild
// the digit's shape, and the page's own preprocessing has to turn that back into
// something MNIST-like.

export const SIDE = 28;

/** [[x0, x1, y], ...]: per row, the runs of pixels whose value exceeds threshold. */
export function rowRuns(pixels, threshold = 0.5) {
  const runs = [];
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      if (!(pixels[y * SIDE + x] > threshold)) continue;
      const start = x;
      while (x + 1 < SIDE && pixels[y * SIDE + x + 1] > threshold) x++;
      runs.push([start, x, y]);
    }
  }
  return runs;
}

/** Page coordinates of grid point (gx, gy) (pixel centres at +0.5) inside box. */
export const toPage = (box, gx, gy) => ({ x: box.x + (gx / SIDE) * box.width, y: box.y + (gy / SIDE) * box.height });

/**
 * The runs as mouse strokes: Chrome DevTools Protocol Input.dispatchMouseEvent parameters
 * (move, press, move, release per run), to send without waiting for each one
 * (Playwright's mouse waits about a frame per event).
 */
export function runsToMouseEvents(box, runs) {
  const events = [];
  const at = (p) => ({ x: p.x, y: p.y, clickCount: 1 });
  for (const [x0, x1, y] of runs) {
    const a = toPage(box, x0 + 0.5, y + 0.5);
    const b = toPage(box, x1 + 0.5, y + 0.5);
    events.push({ type: 'mouseMoved', ...at(a), button: 'none', buttons: 0 });
    events.push({ type: 'mousePressed', ...at(a), button: 'left', buttons: 1 });
    if (x1 > x0) events.push({ type: 'mouseMoved', ...at(b), button: 'left', buttons: 1 });
    events.push({ type: 'mouseReleased', ...at(b), button: 'left', buttons: 0 });
  }
  return events;
}

/** A smooth handwritten-looking "3" as one polyline in grid coordinates (for screenshots). */
export function threePath(steps = 40) {
  const points = [];
  // Upper bowl: an arc from upper left round to the middle; lower bowl: a bigger arc to lower left.
  const arc = (cx, cy, r, from, to, n) => {
    for (let i = 0; i <= n; i++) {
      const t = from + ((to - from) * i) / n;
      points.push([cx + r * Math.cos(t), cy + r * Math.sin(t)]);
    }
  };
  arc(13.5, 9.3, 4.6, -2.6, 1.5, steps / 2);
  arc(13.5, 18, 5.1, -1.5, 2.55, steps / 2);
  return points;
}

/** Draws one stroke through grid points. */
export async function drawPath(mouse, box, points) {
  const first = toPage(box, ...points[0]);
  await mouse.move(first.x, first.y);
  await mouse.down();
  for (const p of points.slice(1)) {
    const q = toPage(box, ...p);
    await mouse.move(q.x, q.y);
  }
  await mouse.up();
}
