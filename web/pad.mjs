// pad.mjs — a canvas to draw on with a mouse, a finger or a pen (Pointer Events).
//
// One stroke at a time: the first pointer down owns the stroke until it lifts, so a
// resting palm or a second finger does not scribble. The ink is the canvas's alpha
// channel, so the stroke colour (the canvas's CSS `color`) can follow the theme.

import { alphaToInk } from './preprocess.mjs';

export class DrawingPad {
  #canvas;
  #ctx;
  #pointer = null; // id of the pointer drawing the current stroke
  #last = null; // its last position, in canvas pixels
  #empty = true;

  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{ lineWidth?: number, onChange?: (pad: DrawingPad, ended: boolean) => void }} options
   *   lineWidth in canvas pixels (default: 1/13 of the width, MNIST-like strokes once the
   *   digit is scaled to 20 x 20); onChange runs after each drawn segment and at stroke end.
   */
  constructor(canvas, { lineWidth = canvas.width / 13, onChange = () => {} } = {}) {
    this.#canvas = canvas;
    this.#ctx = canvas.getContext('2d', { willReadFrequently: true });
    this.lineWidth = lineWidth;
    this.onChange = onChange;
    canvas.addEventListener('pointerdown', (e) => this.#down(e));
    canvas.addEventListener('pointermove', (e) => this.#move(e));
    for (const type of ['pointerup', 'pointercancel', 'lostpointercapture']) {
      canvas.addEventListener(type, (e) => this.#up(e));
    }
  }

  get width() { return this.#canvas.width; }
  get height() { return this.#canvas.height; }
  get isEmpty() { return this.#empty; }

  /** The drawing as ink in [0, 1], width * height values, row-major. */
  ink() {
    return alphaToInk(this.#ctx.getImageData(0, 0, this.width, this.height).data);
  }

  clear() {
    this.#ctx.clearRect(0, 0, this.width, this.height);
    this.#empty = true;
    this.#pointer = null;
    this.#last = null;
    this.onChange(this, true);
  }

  // Client coordinates -> canvas pixels (the canvas is scaled by CSS).
  #point(e) {
    const r = this.#canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) * this.width) / r.width, y: ((e.clientY - r.top) * this.height) / r.height };
  }

  #down(e) {
    if (this.#pointer !== null || (e.pointerType === 'mouse' && e.button !== 0)) return;
    e.preventDefault();
    this.#pointer = e.pointerId;
    this.#canvas.setPointerCapture?.(e.pointerId);
    const ctx = this.#ctx;
    ctx.strokeStyle = ctx.fillStyle = getComputedStyle(this.#canvas).color;
    ctx.lineWidth = this.lineWidth;
    ctx.lineCap = ctx.lineJoin = 'round';
    this.#last = this.#point(e);
    ctx.beginPath();
    ctx.arc(this.#last.x, this.#last.y, this.lineWidth / 2, 0, 2 * Math.PI);
    ctx.fill();
    this.#empty = false;
    this.onChange(this, false);
  }

  #move(e) {
    if (e.pointerId !== this.#pointer) return;
    e.preventDefault();
    // Coalesced events keep fast strokes smooth where the browser batches moves.
    const events = e.getCoalescedEvents?.() ?? [];
    const ctx = this.#ctx;
    ctx.beginPath();
    ctx.moveTo(this.#last.x, this.#last.y);
    for (const ev of events.length ? events : [e]) {
      this.#last = this.#point(ev);
      ctx.lineTo(this.#last.x, this.#last.y);
    }
    ctx.stroke();
    this.onChange(this, false);
  }

  #up(e) {
    if (e.pointerId !== this.#pointer) return;
    this.#pointer = null;
    this.#last = null;
    this.onChange(this, true);
  }
}
