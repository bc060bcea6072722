// The explorer page of `rnnsearch serve` in a real browser (Debian's headless
// Chromium, driven by playwright-core): train a small model, start the server
// on a free loopback port, type a sentence, wait for the translation and the
// heatmap, hover a source word (its column lit, its weights shown), read the
// coverage row under the matrix, switch to the second hypothesis, align a
// typed target, download the SVG; translate greedily and click a cell to push
// the attention (the translation after the push and its alignment, α = 1 on
// the word clicked); screenshots at each step. Then the training view: a short run on corpora/reorder with
// watched sentences and gold links, served; the slider and the play button
// must show the matrices watch.jsonl recorded, and so must the replay page
// `align --replay` writes. Run from the repository root: `make check-browser`.
//
// Environment: RNNSEARCH (the program, default ./rnnsearch), CHROMIUM
// (default /usr/bin/chromium), MODEL (a trained model to use instead of
// training one), SCREENSHOTS (directory, default build/browser), SENTENCE.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const program = resolve(process.env.RNNSEARCH || './rnnsearch');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const shots = resolve(process.env.SCREENSHOTS || 'build/browser');
const sentence = process.env.SENTENCE || 'Saturday, 21 November 2026';
const scratch = mkdtempSync(join(tmpdir(), 'rnnsearch-browser-'));
let passed = 0, failed = 0, server = null, context = null, runServer = null, extraServer = null, secondServer = null;

function check(ok, what) {
  if (ok) { passed++; console.log('ok   ' + what); }
  else { failed++; console.log('FAIL ' + what); }
  return ok;
}

// Everything is bounded: a hung browser or server fails the test, not CI.
const deadline = setTimeout(() => { console.log('FAIL the test took more than 240 s'); finish(1); }, 240000);

async function finish(code) {
  clearTimeout(deadline);
  try { if (context) await context.close(); } catch (e) { /* already gone */ }
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (runServer && runServer.exitCode === null) runServer.kill('SIGKILL');
  if (extraServer && extraServer.exitCode === null) extraServer.kill('SIGKILL');
  if (secondServer && secondServer.exitCode === null) secondServer.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(code || (failed ? 1 : 0));
}

function trainModel() {
  if (process.env.MODEL) return resolve(process.env.MODEL);
  const out = join(scratch, 'dates');
  console.log('training a small model on corpora/dates ...');
  execFileSync(program, ['train', '--train', 'corpora/dates/train.tsv', '--out', out,
    '--emb', '32', '--hidden', '64', '--att', '64', '--maxout', '32', '--batch-size', '32',
    '--epochs', '1', '--max-steps', '500', '--lr', '0.005', '--threads', '1', '--quiet'],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

// Starts `rnnsearch serve ARGS` on port 0 and reads the port it took from its
// first line; onStart receives the process at once (to stop it on failure).
function spawnServer(args, onStart) {
  return new Promise((resolvePort, reject) => {
    const proc = spawn(program, ['serve', ...args, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    onStart(proc);
    let log = '';
    proc.stderr.on('data', (d) => {
      log += d;
      const m = log.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) resolvePort(+m[1]);
    });
    proc.on('exit', (code) => reject(new Error('the server exited (' + code + '): ' + log)));
  });
}

function startServer(model) {
  return spawnServer(['-m', model, '--threads', '2'], (p) => { server = p; });
}

async function api(base, path, body) {
  const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                         body: JSON.stringify(body) });
  return res.json();
}

// A run that learns to align within seconds: evaluations every 25 steps,
// three watched dev pairs, gold links for the AER.
function trainRun() {
  const out = join(scratch, 'reorder');
  console.log('training a watched run on corpora/reorder ...');
  execFileSync(program, ['train', '--train', 'corpora/reorder/train.tsv', '--dev', 'corpora/reorder/dev.tsv',
    '--dev-align', 'corpora/reorder/dev.align', '--out', out, '--epochs', '1', '--eval-every', '25',
    '--threads', '1', '--quiet'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

function watchRecords(dir, sentence, kind) {
  return readFileSync(join(dir, 'watch.jsonl'), 'utf8').split('\n').filter((l) => l)
    .map((l) => JSON.parse(l)).filter((r) => r.sentence === sentence && r.kind === kind);
}

// The matrix on the page: its cells' recorded weights, row by row.
async function shownMatrix(page) {
  return page.$$eval('#replay-matrix svg rect.cell', (rs) => {
    const m = [];
    rs.forEach((r) => { (m[+r.dataset.i] = m[+r.dataset.i] || [])[+r.dataset.j] = +r.dataset.w; });
    return m;
  });
}

const sameMatrix = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The grey of the cell of largest weight: {w, grey} (grey: the red of its
// computed fill, 0 to 255). Both matrices map weight to grey the same way,
// white = 1 (Bahdanau et al.'s figure 3): grey = round(255 w).
async function maxCell(page, selector, weights) {
  return page.$$eval(selector, (rs, ws) => {
    let best = null;
    rs.forEach((r) => {
      const w = ws ? ws[+r.dataset.i][+r.dataset.j] : +r.dataset.w;
      if (!best || w > best.w) best = { w, grey: +getComputedStyle(r).fill.match(/\d+/)[0] };
    });
    return best;
  }, weights || null);
}

// A chart's promises: every line named in a legend entry that lies right of
// the plot (off the curves); every label inside the viewBox; round ticks
// (a linear axis: equal steps of 1, 2 or 5 times a power of ten, each label a
// multiple; a log one: 1, 2 or 5 times a power of ten).
async function checkChart(page, id) {
  const c = await page.$eval('#' + id + ' svg', (svg) => {
    const [, , W, H] = svg.getAttribute('viewBox').split(' ').map(Number);
    const frame = svg.querySelector('rect').getBBox();
    const out = (b) => b.x < -0.5 || b.y < -0.5 || b.x + b.width > W + 0.5 || b.y + b.height > H + 0.5;
    return {
      lines: [...svg.querySelectorAll('path[data-series]')].map((p) => p.dataset.series),
      legend: [...svg.querySelectorAll('g.legend-entry')].map((g) => ({ name: g.dataset.series, x: g.getBBox().x })),
      plotRight: frame.x + frame.width,
      outside: [...svg.querySelectorAll('text')].filter((t) => out(t.getBBox())).map((t) => t.textContent),
      ticks: [...svg.querySelectorAll('text.tick.y')].map((t) => t.textContent),
      log: svg.textContent.includes('log scale'),
    };
  });
  const named = JSON.stringify(c.legend.map((e) => e.name)) === JSON.stringify(c.lines);
  check(c.lines.length > 0 && named && c.legend.every((e) => e.x > c.plotRight),
        `${id}: all ${c.lines.length} lines in a legend right of the plot (${c.legend.map((e) => e.name).join(', ')})`);
  check(c.outside.length === 0, `${id}: every label inside the picture` + (c.outside.length ? ': ' + c.outside.join(' ') : ''));
  const v = c.ticks.map(Number), mant = (x) => x / 10 ** Math.floor(Math.log10(x) + 1e-9);
  const round125 = (x) => x === 0 || [1, 2, 5, 10].some((m) => Math.abs(mant(Math.abs(x)) - m) < 1e-6);
  const step = v[1] - v[0];
  const ok = c.log ? v.every(round125)
    : round125(step) && v.every((x, k) => Math.abs(x - v[0] - k * step) < step * 1e-6 && Math.abs(x / step - Math.round(x / step)) < 1e-6);
  check(v.length >= 3 && ok, `${id}: round ticks ${c.ticks.join(' ')}${c.log ? ' (log)' : ''}`);
  return c;
}

// The cursors of the three charts: at the shown evaluation's step.
async function cursors(page) {
  return page.$$eval('#loss-chart-cursor, #align-chart-cursor, #entropy-chart-cursor',
                     (ls) => ls.map((l) => ({ step: +l.dataset.step, x: +l.getAttribute('x1') })));
}

async function setSlider(page, k) {
  await page.evaluate((v) => {
    const s = document.querySelector('#eval-slider');
    s.value = String(v);
    s.dispatchEvent(new Event('input'));
  }, k);
}

let explorerMax = null; // the explorer's strongest cell, for the replay to compare

async function trainingView() {
  const run = trainRun();
  const recs = watchRecords(run, 0, 'forced');
  check(recs.length > 3 && recs[0].step === 0, `watch.jsonl holds ${recs.length} evaluations of sentence 1 from step 0`);
  const port = await spawnServer(['-m', run, '--threads', '1'], (p) => { runServer = p; });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction((n) => +document.querySelector('#eval-slider').max === n - 1 &&
                                    document.querySelector('#replay-matrix rect.cell') !== null, recs.length, { timeout: 20000 });
  check(await page.isVisible('#training'), 'the training view is shown for the served run');
  for (const id of ['loss-chart', 'align-chart', 'entropy-chart']) await checkChart(page, id);
  const aer = await page.locator('#align-chart path[data-series="AER"]').count();
  check(aer === 1, 'the AER curve is drawn');
  const chartTitle = await page.getAttribute('#align-chart', 'data-title');
  check(/^AER and recall/.test(chartTitle), `the chart of AER, recall and the dev metric says so: "${chartTitle}"`);
  const replayBar = await page.locator('#replay-matrix svg g.colorbar rect').count();
  check(replayBar >= 64, `the training view's matrix has a colour bar (${replayBar} rects)`);
  // The slider: the first and the last evaluation are the recorded matrices.
  await setSlider(page, 0);
  check(sameMatrix(await shownMatrix(page), recs[0].alignment), 'slider at 0: the matrix of step 0 as recorded');
  check((await page.textContent('#replay-label')).startsWith('step 0 '), 'the label names step 0');
  const first = await cursors(page);
  check(first.length === 3 && first.every((c) => c.step === 0), `the loss, AER and entropy charts mark step 0 (${JSON.stringify(first)})`);
  // Gold links (train --dev-align, the first dev pair watched): over the cells they join.
  const gold = await page.$$eval('#replay-matrix rect.gold.sure', (rs) => rs.map((r) => [+r.dataset.j, +r.dataset.i]));
  const wantGold = recs[0].gold ? recs[0].gold.sure : [];
  check(wantGold.length > 0 && JSON.stringify(gold) === JSON.stringify(wantGold),
        `the ${wantGold.length} sure gold links of the pair are drawn over the matrix (${gold.length})`);
  await page.locator('#training').screenshot({ path: join(shots, 'training-first.png') });
  const mid = Math.floor(recs.length / 2);
  await setSlider(page, mid);
  check(sameMatrix(await shownMatrix(page), recs[mid].alignment), `slider at ${mid}: the matrix of step ${recs[mid].step} as recorded`);
  const moved = await cursors(page);
  check(moved.length === 3 && moved.every((c, k) => c.step === recs[mid].step && c.x > first[k].x),
        `the cursors move to step ${recs[mid].step} (${JSON.stringify(moved)})`);
  // Play from the start: the evaluations go by and it stops at the last one.
  await setSlider(page, 0);
  await page.click('#play');
  await page.waitForFunction(() => +document.querySelector('#eval-slider').value > 0, null, { timeout: 5000 });
  check(true, 'play advances the slider');
  await page.waitForFunction((n) => +document.querySelector('#eval-slider').value === n - 1 &&
                                    document.querySelector('#play').textContent.includes('Play'), recs.length, { timeout: 30000 });
  const last = recs[recs.length - 1];
  check(sameMatrix(await shownMatrix(page), last.alignment), `play ends on the last evaluation (step ${last.step}) as recorded`);
  const ent = await page.$$eval('#replay-matrix rect.entropy', (rs) => rs.map((r) => +r.dataset.h));
  const want = last.alignment.map((row) => row.reduce((h, a) => (a > 0 ? h - a * Math.log(a) : h), 0));
  check(ent.length === want.length && ent.every((h, i) => Math.abs(h - want[i]) < 1e-3), 'each target word\'s attention entropy is shown');
  await page.locator('#training').screenshot({ path: join(shots, 'training-last.png') });
  // The greedy translation's alignments too.
  await page.selectOption('#watch-kind', 'greedy');
  const greedy = watchRecords(run, 0, 'greedy');
  await setSlider(page, greedy.length - 1);
  check(sameMatrix(await shownMatrix(page), greedy[greedy.length - 1].alignment), 'the greedy alignment as recorded');
  check(errors.length === 0, 'no script errors in the training view' + (errors.length ? ': ' + errors.join(' | ') : ''));
  await page.close();

  // The replay page: the same view from one file, nothing fetched.
  const replay = join(scratch, 'replay.html');
  execFileSync(program, ['align', '--replay', run, '-o', replay]);
  const offline = await context.newPage();
  const fetched = [];
  offline.on('request', (r) => { if (!r.url().startsWith('file:')) fetched.push(r.url()); });
  await offline.goto('file://' + replay);
  await offline.waitForFunction(() => document.querySelector('#replay-matrix rect.cell') !== null, null, { timeout: 10000 });
  check(sameMatrix(await shownMatrix(offline), recs[recs.length - 1].alignment), 'the replay page shows the last recorded matrix');
  const name = run.split('/').pop();
  check(await offline.title() === `rnnsearch: how ${name} learned to align` &&
        (await offline.textContent('#training-title')) === await offline.title(),
        `the replay page is titled "${await offline.title()}"`);
  const top = await offline.evaluate(() => document.querySelector('#training h2').getBoundingClientRect().top);
  check(top < 40 && !(await offline.isVisible('header')), `no empty band above the replay (its title at ${top.toFixed(0)} px)`);
  const replayMax = await maxCell(offline, '#replay-matrix rect.cell');
  check(Math.abs(replayMax.grey - Math.round(255 * replayMax.w)) <= 1 && replayMax.grey > 128,
        `the replay's strongest cell (${replayMax.w.toFixed(3)}) is light: grey ${replayMax.grey}`);
  check(explorerMax && replayMax.grey === Math.round(255 * replayMax.w) &&
        explorerMax.grey === Math.round(255 * explorerMax.w),
        `explorer and replay map weight to grey alike: ${explorerMax && explorerMax.w.toFixed(3)} -> ${explorerMax && explorerMax.grey}, ` +
        `${replayMax.w.toFixed(3)} -> ${replayMax.grey}`);
  await offline.screenshot({ path: join(shots, 'replay.png'), fullPage: true });
  await setSlider(offline, 0);
  check(sameMatrix(await shownMatrix(offline), recs[0].alignment), 'its slider goes back to step 0');
  check(fetched.length === 0, 'the replay page fetches nothing' + (fetched.length ? ': ' + fetched.join(' ') : ''));
  await offline.close();
  runServer.removeAllListeners('exit');
  runServer.kill('SIGTERM');
  await longRunView(run);
  await hugeMatrixView(run);
}

// A hostile (or huge) watch record: a 1000 x 1000 alignment that fits
// --max-answer. The page draws at most 200 x 200 cells and says so, and a
// poll that brings nothing new does not redraw it (it froze the page, a
// million-cell picture redrawn every 2 s).
async function hugeMatrixView(run) {
  const dir = join(scratch, 'huge-run');
  mkdirSync(dir);
  const n = 1000, words = Array.from({ length: n - 1 }, (_, k) => 'w' + k).concat(['</s>']);
  const row = JSON.stringify(Array.from({ length: n }, (_, j) => (j === 0 ? 1 : 0)));
  const rec = `{"step":0,"epoch":0,"sentence":0,"kind":"forced","gold":{"sure":[[0,0]],"possible":[[1,0],[5000,1]]},` +
              `"source":${JSON.stringify(words)},` +
              `"target":${JSON.stringify(words)},"alignment":[${Array(n).fill(row).join(',')}]}`;
  writeFileSync(join(dir, 'watch.jsonl'), rec + '\n');
  writeFileSync(join(dir, 'train.log.tsv'), 'step\tepoch\ttrain_loss\n0\t0\t3.0\n');
  const port = await spawnServer(['-m', run, '--run', dir, '--threads', '1', '--max-answer', '16777216'],
                                 (p) => { extraServer = p; });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.querySelector('#replay-matrix svg') !== null, null, { timeout: 30000 });
  const cells = await page.$$eval('#replay-matrix rect.cell', (r) => r.length);
  const note = await page.textContent('#replay-matrix [data-note=matrix-cut]').catch(() => '');
  check(cells === 200 * 200 && /200 of 1000/.test(note), `a 1000 x 1000 matrix is drawn as ${cells} cells ("${note}")`);
  await page.evaluate(() => { window.firstMatrix = document.querySelector('#replay-matrix svg'); });
  await page.waitForTimeout(4500);
  const same = await page.evaluate(() => document.querySelector('#replay-matrix svg') === window.firstMatrix);
  check(same, 'polls that bring nothing new do not redraw the matrix');
  const links = await page.$$eval('#replay-matrix rect.gold', (rs) => rs.map((r) => r.getAttribute('class') + ' ' +
                                  r.dataset.i + ',' + r.dataset.j + ' ' + (r.getAttribute('stroke-dasharray') || 'solid')));
  check(JSON.stringify(links) === JSON.stringify(['gold sure 0,0 solid', 'gold possible 0,1 3 2']),
        `a sure and a possible gold link, told apart; one outside the matrix left out (${links.join(' | ')})`);
  // Its log has no dev metric and no gold links: no such chart, not empty axes.
  const metricChart = await page.$$eval('#align-chart svg', (ss) => ss.length);
  check(metricChart === 0 && !(await page.isVisible('#align-chart')) && await page.isVisible('#loss-chart svg'),
        `a run without a dev metric draws no "dev metric (%)" chart (${metricChart} pictures), the loss chart still`);
  check(errors.length === 0, 'no script errors with a huge matrix' + (errors.length ? ': ' + errors.join(' | ') : ''));
  await page.close();
  check(await stopExtra() === 0, 'the huge-matrix server stops cleanly');
}

async function stopExtra() {
  extraServer.removeAllListeners('exit');
  const stopped = new Promise((r) => extraServer.on('exit', (code) => r(code)));
  extraServer.kill('SIGTERM');
  return stopped;
}

// A long run: a 30 000-row log (larger than an answer) and one watch record
// larger than --max-answer among the recorded ones. The page says the curves
// are thinned and the record skipped, and still shows the records after it.
async function longRunView(run) {
  const dir = join(scratch, 'long-run');
  mkdirSync(dir);
  const header = 'step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\tdev_metric_name\taer\talign_precision\talign_recall\n';
  let log = header;
  for (let k = 1; k <= 30000; k++)
    log += `${k}\t1\t${(3 / (1 + k / 10)).toFixed(9)}\t${(3.1 / (1 + k / 1000)).toFixed(9)}\t${(k / 300).toFixed(4)}\t115000.0\t0.002\t${(k / 10).toFixed(3)}\tbleu\t\t\t\n`;
  writeFileSync(join(dir, 'train.log.tsv'), log);
  const lines = readFileSync(join(run, 'watch.jsonl'), 'utf8').split('\n').filter((l) => l);
  const big = JSON.stringify({ step: 1, epoch: 1, sentence: 0, kind: 'forced', pad: 'x'.repeat(200000) });
  const half = Math.floor(lines.length / 2);
  writeFileSync(join(dir, 'watch.jsonl'), [...lines.slice(0, half), big, ...lines.slice(half)].join('\n') + '\n');
  const recs = watchRecords(run, 0, 'forced');
  const port = await spawnServer(['-m', run, '--run', dir, '--threads', '1', '--max-answer', '65536'],
                                 (p) => { extraServer = p; });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction((n) => +document.querySelector('#eval-slider').max === n - 1 &&
                                    document.querySelector('#run-notes [data-note=skipped]') !== null,
                             recs.length, { timeout: 20000 });
  const thinned = await page.textContent('#run-notes [data-note=thinned]').catch(() => '');
  check(/about 3\d[\d,]* rows|about 29\d{3} rows/.test(thinned) && /show \d+ of them/.test(thinned),
        `the page says the log is thinned: "${thinned}"`);
  const skipped = await page.textContent('#run-notes [data-note=skipped]');
  check(skipped.startsWith('1 watched alignment was larger'), `the page says one record was skipped: "${skipped}"`);
  check(sameMatrix(await shownMatrix(page), recs[recs.length - 1].alignment),
        'the records after the skipped one are shown, to the last');
  const path = await page.$$eval('#loss-chart path[data-series="train"]', (ps) => ps.map((p) => p.getAttribute('d').split('L').length));
  const sent = +((thinned.match(/show (\d+) of them/) || [])[1] || 0);
  check(path.length === 1 && path[0] === sent && sent >= 100, `the loss curve is drawn from the ${sent} rows sent (${path[0]} points)`);
  // A loss from 3 to 0.001: a log axis, ticked at the powers of ten.
  const loss = await checkChart(page, 'loss-chart');
  check(loss.log && loss.ticks.join(' ') === '0.0001 0.001 0.01 0.1 1 10', `a loss over four decades on a log axis (${loss.ticks.join(' ')})`);
  await page.locator('#training').screenshot({ path: join(shots, 'training-long-run.png') });
  check(errors.length === 0, 'no script errors in the long run' + (errors.length ? ': ' + errors.join(' | ') : ''));
  await page.close();
  check(await stopExtra() === 0, 'the long-run server stops cleanly');
}

// Opened with /?token=…, the page takes the token out of the address bar and
// the history at once, keeps it in its origin's localStorage and sends it as
// Authorization: Bearer; never a cookie, which a browser would send to every
// port of the host (another user's server there received the token, and
// could plant a cookie of the same name that locked the page out).
async function tokenIsForgotten(model) {
  const token = 'browser-token-1234';
  const port = await spawnServer(['-m', model, '--threads', '1', '--token', token], (p) => { extraServer = p; });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/?token=${token}#top`);
  await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0, null, { timeout: 10000 });
  await page.waitForFunction(() => !location.search.includes('token'), null, { timeout: 5000 }).catch(() => {});
  const url = new URL(page.url());
  check(url.search === '' && url.pathname === '/' && url.hash === '#top',
        `the token left the address bar: ${page.url()}`);
  await page.goBack().catch(() => null);
  const back = page.url();
  await page.goForward().catch(() => null);
  check(!back.includes('token') && !page.url().includes('token'),
        `no history entry holds it (back: ${back}, forward: ${page.url()})`);
  await page.locator('#source').fill('21 nov. 2026');
  await page.click('#translate');
  await page.waitForFunction(() => document.querySelector('#heatmap svg rect.cell') !== null, null, { timeout: 20000 });
  check(true, 'the page translates with the stored token');
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0, null, { timeout: 10000 });
  check(new URL(page.url()).search === '', 'a reload keeps working without the token in the address');
  // A second server on the same host, with its own token: the browser sends
  // a host's cookies to every port, so each server's cookie has its own name.
  const port2 = await spawnServer(['-m', model, '--threads', '1', '--token', 'browser-token-5678'],
                                  (p) => { secondServer = p; });
  const other = await context.newPage();
  await other.goto(`http://127.0.0.1:${port2}/?token=browser-token-5678`);
  await other.waitForFunction(() => document.querySelectorAll('#model option').length > 0, null, { timeout: 10000 });
  await page.locator('#source').fill('3 nov. 2021');
  await page.click('#translate');
  await page.waitForFunction(() => document.querySelector('#result').dataset.text === '3 nov. 2021' ||
                                   document.querySelector('#status').className === 'error', null, { timeout: 20000 });
  const status = await page.textContent('#status');
  check(await page.getAttribute('#result', 'data-text') === '3 nov. 2021',
        `the first server's page still works after the second's was opened ("${status}")`);
  await other.close();
  // Another service on the same host, another port: it must receive no
  // token, and a cookie it plants for the server's paths must not lock the
  // page out.
  const seen = [];
  const spy = createServer((req, res) => {
    seen.push(JSON.stringify(req.headers));
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<script>document.cookie = 'rnnsearch_token_${port}=x; path=/api';
             document.cookie = 'rnnsearch_token_${port}=x; path=/';</script>spy`);
  });
  const spyPort = await new Promise((r) => spy.listen(0, '127.0.0.1', () => r(spy.address().port)));
  const spyPage = await context.newPage();
  await spyPage.goto(`http://127.0.0.1:${spyPort}/`);
  await spyPage.goto(`http://127.0.0.1:${spyPort}/api/models`);
  await spyPage.close();
  spy.close();
  check(seen.length >= 2 && !seen.some((h) => h.includes(token)),
        `a server on another port of the host receives no token (${seen.length} requests)`);
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0, null, { timeout: 10000 });
  await page.locator('#source').fill('4 nov. 2021');
  await page.click('#translate');
  await page.waitForFunction(() => document.querySelector('#result').dataset.text === '4 nov. 2021' ||
                                   document.querySelector('#status').className === 'error', null, { timeout: 20000 });
  check(await page.getAttribute('#result', 'data-text') === '4 nov. 2021',
        `a cookie planted by another port does not lock the page out ("${await page.textContent('#status')}")`);
  // Another origin of the same server (localhost, not 127.0.0.1) holds no
  // token: the page says how to give it.
  const bare = await context.newPage();
  await bare.goto(`http://localhost:${port}/`);
  await bare.waitForFunction(() => document.querySelector('#status').className === 'error', null, { timeout: 10000 }).catch(() => {});
  const told = await bare.textContent('#status');
  check(/needs its token/.test(told) && /\?token=/.test(told), `a page without a token says how to give it ("${told}")`);
  await bare.close();
  secondServer.removeAllListeners('exit');
  secondServer.kill('SIGTERM');
  await page.close();
  check(await stopExtra() === 0, 'the token server stops cleanly');
}

// Push the attention: translate greedily (beam 1), find through the API a
// cell whose push changes the translation, click it in the explorer's
// matrix; the page must show the greedy translation before and the one after
// the push (as POST /api/push answers), and the pushed step's row after the
// push must hold α = 1 on the word clicked (white) and 0 elsewhere (black).
async function pushAttention(page, base) {
  await page.fill('#beam', '1');
  await page.fill('#nbest', '1');
  await page.click('#translate');
  await page.waitForFunction(() => document.querySelector('#hyps').children.length === 1 &&
                                   document.querySelector('#heatmap svg rect.cell') !== null, null, { timeout: 20000 });
  const greedy = await api(base, '/api/translate', { text: sentence, beam: 1 });
  const al = greedy.hypotheses[0].alignment, rows = al.target.length, cols = al.source.length;
  let pick = null, answer = null;
  for (let i = 0; i < rows && !pick; i++)
    for (let j = 0; j < cols && !pick; j++) {
      const a = await api(base, '/api/push', { text: sentence, step: i + 1, attend: j + 1 });
      if (a.after.translation !== a.before.translation) { pick = [i, j]; answer = a; }
    }
  check(pick !== null, `some push changes the greedy translation "${greedy.translation}"` +
        (pick ? ` (step ${pick[0] + 1} onto "${al.source[pick[1]]}": "${answer.after.translation}")` : ''));
  if (!pick) return;
  const [i, j] = pick;
  await page.locator(`#heatmap svg rect.cell[data-i="${i}"][data-j="${j}"]`).click();
  await page.waitForFunction((s) => document.querySelector('#push').dataset.step === String(s) &&
                                    document.querySelector('#push-after svg rect.cell') !== null, i + 1, { timeout: 20000 });
  const before = await page.textContent('#push-before-text'), after = await page.textContent('#push-after-text');
  check(before === greedy.translation && before === answer.before.translation,
        `before the push, the greedy translation: "${before}"`);
  check(after === answer.after.translation && after !== before,
        `clicking step ${i + 1}'s cell of "${al.source[j]}" shows the translation after the push: "${after}"`);
  const row = await page.$$eval(`#push-after svg rect.cell[data-i="${i}"]`,
                                (rs) => rs.map((r) => ({ w: +r.dataset.w, fill: r.getAttribute('fill') })));
  check(row.length === cols && row.every((c, k) => (k === j ? c.w === 1 && c.fill === '#ffffff' : c.w === 0 && c.fill === '#000000')),
        `the pushed step's row after the push has α = 1 on "${al.source[j]}" and 0 elsewhere (${row.map((c) => c.w).join(' ')})`);
  const shape = await page.$$eval('#push-after svg rect.cell', (rs) => rs.length);
  const wantShape = answer.after.alignment.target.length * answer.after.alignment.source.length;
  check(shape === wantShape, `the alignment after the push is drawn whole (${shape} cells)`);
  const outlined = await page.locator('#push-after svg rect.pushed-row').count();
  check(outlined === 1, 'the pushed row is outlined');
  await page.screenshot({ path: join(shots, 'serve-push.png'), fullPage: true });
}

async function main() {
  mkdirSync(shots, { recursive: true });
  const model = trainModel();
  const port = await startServer(model);
  const base = `http://127.0.0.1:${port}`;
  check(port > 0, 'the server listens on ' + base);

  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: browserPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
    acceptDownloads: true,
  });
  const page = context.pages()[0] || await context.newPage();
  const foreign = [], errors = [];
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:')) foreign.push(r.url()); });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  await page.goto(base + '/');
  await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0);
  check(await page.title() === 'rnnsearch — attention explorer', 'the page loads and lists the models');

  // Type a sentence; the page translates it (beam 5, 5 best by default).
  await page.locator('#source').pressSequentially(sentence, { delay: 15 });
  // (The page may have translated a prefix on the way: wait for the whole sentence.)
  await page.waitForFunction((s) => document.querySelector('#result').dataset.text === s &&
                                    document.querySelector('#heatmap svg rect.cell') !== null,
                             sentence, { timeout: 20000 });
  const want = await api(base, '/api/translate', { text: sentence, beam: 5, n_best: 5, svg: true });
  const shown = await page.textContent('#translation');
  check(shown === want.translation, `the translation is shown: "${shown}" (the API says "${want.translation}")`);
  const best = want.hypotheses[0].alignment;
  const rows = best.target.length, cols = best.source.length;
  const cells = await page.locator('#heatmap svg rect.cell').count();
  check(cells === rows * cols, `the heatmap has ${rows} x ${cols} cells (${cells})`);
  explorerMax = await maxCell(page, '#heatmap svg rect.cell', best.alignment);
  check(Math.abs(explorerMax.grey - Math.round(255 * explorerMax.w)) <= 1 && explorerMax.grey > 128,
        `the explorer's strongest cell (${explorerMax.w.toFixed(3)}) is light: grey ${explorerMax.grey}`);
  // The colour bar of the one scale: the SVG's own group, black at 0, white at 1.
  const bar = await page.$$eval('#heatmap svg g.colorbar rect[fill]', (rs) => rs.map((r) => r.getAttribute('fill')));
  const barTicks = await page.$$eval('#heatmap svg g.colorbar text', (ts) => ts.map((t) => t.textContent));
  check(bar.length >= 64 && bar[0] === '#020202' && bar[63] === '#fdfdfd' &&
        barTicks.includes('0') && barTicks.includes('1'),
        `the heatmap has a colour bar from black (0) to white (1) (${bar.length} bands, ticks ${barTicks.join(' ')})`);
  // Coverage: Σ_i α_ij under each source word, blue below 0.2 and red above 2
  // (</s> unmarked), and the legend saying so.
  const cov = await page.$$eval('#heatmap svg g.coverage text', (ts) => ts.map((t) => ({ text: t.textContent, fill: t.getAttribute('fill') })));
  const wantCov = best.source.map((_, jj) => best.alignment.reduce((a, row) => a + row[jj], 0));
  const markOf = (c, jj) => (jj === cols - 1 ? '#000000' : c < 0.2 ? '#1f5fbf' : c > 2 ? '#c0392b' : '#000000');
  const covOk = cov.length === cols + 1 && wantCov.every((c, jj) => cov[jj].text === c.toFixed(2) && cov[jj].fill === markOf(c, jj)) &&
                /below 0\.2/.test(cov[cols].text) && /above 2/.test(cov[cols].text);
  check(covOk, `the coverage row is shown under the explorer's matrix: ${cov.slice(0, cols).map((c) => c.text + (c.fill === '#000000' ? '' : c.fill === '#1f5fbf' ? '(low)' : '(high)')).join(' ')} ` +
        `(the API's alignment sums: ${wantCov.map((c) => c.toFixed(2)).join(' ')})`);
  const marked = wantCov.slice(0, -1).filter((c) => c < 0.2 || c > 2).length;
  check(marked === cov.slice(0, cols - 1).filter((c) => c.fill !== '#000000').length,
        `the ${marked} source words barely attended (< 0.2) or attended past 2 are marked`);
  const hyps = await page.locator('#hyps button').count();
  check(hyps === want.hypotheses.length && hyps > 1, `the beam's ${hyps} hypotheses are listed`);
  await page.screenshot({ path: join(shots, 'serve-translation.png'), fullPage: true });

  // Hover a source word: its column is lit and its weights are shown.
  const j = Math.min(3, cols - 2);
  await page.locator(`#src-tokens span[data-j="${j}"]`).hover();
  const lit = await page.$$eval('#heatmap svg rect.in-col', (rs) => rs.map((r) => +r.dataset.j));
  check(lit.length === rows && lit.every((x) => x === j), `hovering source word ${j + 1} lights its column (${lit.length} cells)`);
  check(await page.isVisible('#heatmap-col'), 'the column outline is drawn');
  const litLook = await page.$$eval('#heatmap svg rect.in-col', (rs) => rs.map((r) => getComputedStyle(r).opacity));
  check(litLook.every((o) => o === '1'), `a lit column keeps its greys (opacity ${[...new Set(litLook)].join(' ')})`);
  const caption = await page.textContent('#weights p');
  check(caption.includes(`(column ${j}, from 0)`), `the side panel counts columns from 0: "${caption}"`);
  const weights = await page.$$eval('#weights table[data-kind=column] td.w', (tds) => tds.map((t) => t.textContent));
  const expected = best.alignment.map((row) => row[j].toFixed(3));
  check(JSON.stringify(weights) === JSON.stringify(expected),
        `the column's weights are shown: ${weights.join(' ')} (the API: ${expected.join(' ')})`);
  await page.screenshot({ path: join(shots, 'serve-hover.png'), fullPage: true });

  // A target word: its row.
  await page.locator('#heatmap svg text.tgt-label').first().hover();
  const rowLit = await page.locator('#heatmap svg rect.in-row').count();
  const rowWeights = await page.$$eval('#weights table[data-kind=row] td.w', (tds) => tds.map((t) => +t.textContent));
  const sum = rowWeights.reduce((a, b) => a + b, 0);
  check(rowLit === cols && Math.abs(sum - 1) < 0.01 * cols, `hovering a target word lights its row (${rowLit} cells, weights sum to ${sum.toFixed(3)})`);

  // The second hypothesis redraws the matrix.
  await page.locator('#hyps button[data-rank="1"]').click();
  const second = want.hypotheses[1];
  const title = await page.textContent('#heatmap svg > title');
  const pressed = await page.getAttribute('#hyps button[data-rank="1"]', 'aria-pressed');
  const cells2 = await page.locator('#heatmap svg rect.cell').count();
  check(pressed === 'true' && title === second.translation &&
        cells2 === second.alignment.target.length * second.alignment.source.length,
        `switching to hypothesis 2 ("${second.translation}") redraws the matrix (${cells2} cells)`);
  await page.locator(`#src-tokens span[data-j="${j}"]`).hover();
  await page.screenshot({ path: join(shots, 'serve-second-hypothesis.png'), fullPage: true });

  // The SVG download is the picture shown.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const svg = readFileSync(await download.path(), 'utf8');
  check(svg === second.svg, `the downloaded SVG is hypothesis 2's picture (${svg.length} bytes)`);

  // Forced alignment of a typed target.
  const target = process.env.TARGET || want.hypotheses[0].translation;
  await page.fill('#target', target);
  await page.click('#align');
  await page.waitForFunction(() => document.querySelector('#forced-heatmap svg rect.cell') !== null, null, { timeout: 20000 });
  const forced = await api(base, '/api/align', { source: sentence, target });
  const meta = await page.textContent('#forced-meta');
  const lp = Math.abs(forced.logprob) < 0.001 ? forced.logprob.toExponential(1) : forced.logprob.toFixed(3);
  check(meta.includes(lp), `the forced alignment shows log p = ${lp}: "${meta}"`);
  await page.locator('#forced-heatmap svg rect.cell').nth(forced.alignment.source.length + 1).hover();
  await page.screenshot({ path: join(shots, 'serve-forced.png'), fullPage: true });

  await pushAttention(page, base);
  check(foreign.length === 0, 'nothing was fetched from anywhere else' + (foreign.length ? ': ' + foreign.join(' ') : ''));
  check(errors.length === 0, 'no script errors' + (errors.length ? ': ' + errors.join(' | ') : ''));

  // Bad input on the page: the server's message, no script error (the
  // console reports the refused request itself, which is expected).
  errors.length = 0;
  await page.fill('#source', '');
  await page.locator('#source').pressSequentially('x'.repeat(3), { delay: 5 });
  await page.evaluate(() => { document.querySelector('#beam').value = '999'; });
  await page.click('#translate');
  await page.waitForFunction(() => document.querySelector('#status').className === 'error', null, { timeout: 10000 });
  check((await page.textContent('#status')).includes("'beam'"), 'a refused request shows the server\'s message');
  check(errors.every((e) => e.includes('status of 400')), 'only the refused request is reported' + (errors.length ? ': ' + errors.join(' | ') : ''));
  await tokenIsForgotten(model);
  await trainingView();
  console.log('screenshots in ' + shots);

  await context.close();
  context = null;
  server.removeAllListeners('exit');
  const stopped = new Promise((r) => server.on('exit', (code) => r(code)));
  server.kill('SIGTERM');
  check(await stopped === 0, 'the server stops cleanly on SIGTERM');
}

main().then(() => finish(0), (e) => { console.log('FAIL ' + (e && e.stack || e)); failed++; finish(1); });
