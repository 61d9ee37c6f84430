// view.mjs — everything the page writes into the DOM, in one place.

import { formatProgress } from './format.mjs';
import { SIDE } from './preprocess.mjs';

const $ = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`view: #${id} is missing from the page`);
  return el;
};

/** The prediction: top class, its confidence and one bar per class. */
export class ResultView {
  #rows = [];

  constructor(classes) {
    this.output = $('prediction');
    this.confidence = $('confidence');
    this.list = $('bars');
    this.setClasses(classes);
  }

  setClasses(classes) {
    this.classes = classes;
    this.list.replaceChildren();
    this.#rows = classes.map((name) => {
      const li = document.createElement('li');
      li.innerHTML = '<span class="bar-label"></span><span class="bar-track"><span class="bar-fill"></span></span><span class="bar-value">0%</span>';
      li.querySelector('.bar-label').textContent = name;
      this.list.append(li);
      return { li, fill: li.querySelector('.bar-fill'), value: li.querySelector('.bar-value') };
    });
    this.clear('Draw a digit to start');
  }

  /** Shows probabilities (one per class, summing to 1). */
  show(probs) {
    let best = 0;
    for (let i = 1; i < probs.length; i++) if (probs[i] > probs[best]) best = i;
    const pct = (p) => `${(p * 100).toFixed(p >= 0.995 || p < 0.0005 ? 0 : 1)}%`;
    this.output.textContent = this.classes[best];
    this.output.dataset.digit = String(best);
    this.output.dataset.confidence = probs[best].toFixed(4);
    this.confidence.textContent = `${pct(probs[best])} confident`;
    this.#rows.forEach((row, i) => {
      const p = probs[i] ?? 0;
      row.fill.style.width = `${(p * 100).toFixed(2)}%`;
      row.value.textContent = pct(p);
      row.li.classList.toggle('top', i === best);
      row.li.setAttribute('aria-label', `${this.classes[i]}: ${pct(p)}`);
    });
  }

  clear(message) {
    this.output.textContent = '?';
    this.output.dataset.digit = '';
    delete this.output.dataset.confidence;
    this.confidence.textContent = message;
    for (const row of this.#rows) {
      row.fill.style.width = '0%';
      row.value.textContent = '–';
      row.li.classList.remove('top');
      row.li.removeAttribute('aria-label');
    }
  }
}

/** Paints a 28 x 28 input (values in [0, 1]) white on black, or a black square for null. */
export function drawPreview(canvas, input) {
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(SIDE, SIDE);
  for (let i = 0; i < SIDE * SIDE; i++) {
    const v = input ? Math.round(input[i] * 255) : 0;
    image.data.set([v, v, v, 255], i * 4);
  }
  ctx.putImageData(image, 0, 0);
}

/** The download progress bar: determinate with a total, indeterminate without. prefix: 'w-' for the words tab. */
export class ProgressView {
  constructor(prefix = '') {
    this.box = $(`${prefix}progress`);
    this.bar = $(`${prefix}progress-bar`);
    this.text = $(`${prefix}progress-text`);
  }

  /**
   * Returns an onProgress({ loaded, total }) callback labelled with what is loading;
   * the bar appears with the first call, so a load from the cache never flashes it.
   */
  start(label) {
    return ({ loaded, total }) => {
      this.box.hidden = false;
      if (total) {
        this.bar.max = total;
        this.bar.value = loaded;
      } else {
        this.bar.removeAttribute('value'); // indeterminate: the size is unknown
      }
      this.text.textContent = `${label}: ${formatProgress({ loaded, total })}`;
    };
  }

  done() {
    this.box.hidden = true;
  }
}

/** The status line and the error box (code + message). prefix: 'w-' for the words tab. */
export class MessageView {
  constructor(prefix = '') {
    this.status = $(`${prefix}status`);
    this.error = $(`${prefix}error`);
    this.code = $(`${prefix}error-code`);
    this.message = $(`${prefix}error-message`);
  }

  info(text) {
    this.status.textContent = text;
  }

  /** Shows an error with a code (MlrtError, LoadError or any Error). */
  fail(err, context = '') {
    this.code.textContent = err?.code ?? err?.name ?? 'ERROR';
    this.message.textContent = `${context}${err?.message ?? String(err)}`;
    this.error.hidden = false;
  }

  clearError() {
    this.error.hidden = true;
    this.code.textContent = this.message.textContent = '';
  }
}

/** The words tab: the tokens the query became and the ranked words with their cosine. */
export class WordsView {
  constructor() {
    this.tokens = $('w-tokens');
    this.tokenCount = $('w-token-count');
    this.results = $('w-results');
    this.empty = $('w-empty');
    this.latency = $('w-latency');
  }

  /** tokens: [{ id, token }]; specials ([CLS], [SEP]) and ##pieces are marked. */
  showTokens(tokens) {
    this.tokenCount.textContent = String(tokens.length);
    this.tokens.replaceChildren(...tokens.map(({ id, token }) => {
      const li = document.createElement('li');
      li.textContent = token;
      li.title = `id ${id}`;
      li.dataset.id = String(id);
      if (/^\[[A-Z]+\]$/.test(token)) li.classList.add(token === '[UNK]' ? 'unk' : 'special');
      else if (token.startsWith('##')) li.classList.add('piece');
      return li;
    }));
  }

  /** results: [{ word, score }], best first; scores are cosines in [-1, 1]. */
  showResults(results) {
    this.empty.textContent = '';
    this.results.replaceChildren(...results.map(({ word, score }) => {
      const li = document.createElement('li');
      li.innerHTML = '<span class="word"></span><span class="bar-track"><span class="bar-fill"></span></span><span class="bar-value"></span>';
      li.querySelector('.word').textContent = word;
      li.querySelector('.bar-fill').style.width = `${(Math.max(0, score) * 100).toFixed(1)}%`;
      li.querySelector('.bar-value').textContent = score.toFixed(3);
      li.dataset.word = word;
      li.dataset.score = String(score);
      li.setAttribute('aria-label', `${word}: cosine ${score.toFixed(3)}`);
      return li;
    }));
  }

  clear(message) {
    this.results.replaceChildren();
    this.empty.textContent = message;
    this.showTokens([]);
  }
}

/** Sets text of the element #id; used for the facts panels. */
export function setText(id, text) {
  $(id).textContent = text;
}

export { $ };
