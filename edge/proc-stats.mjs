// proc-stats.mjs — what the edge benches read of a process (Linux /proc) and the statistics they print.
import { readFileSync } from 'node:fs';

/** CPU time of a process so far in clock ticks (USER_HZ: 100 a second on Linux): utime + stime. */
export const cpuTicks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
/** A process's resident set, bytes. */
export const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
export { median } from '../bench/median.mjs';
export const quantile = (v, q) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(q * v.length))];
export const mb = (b) => (b / 1e6).toFixed(1);
