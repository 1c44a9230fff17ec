// DOCX to PDF with LibreOffice headless (Debian's libreoffice-writer-nogui), so a Word
// letter is priced, proofed, previewed and printed from its real layout
// (docs/decisions/0141-docx-laid-out-by-libreoffice.md). Each conversion is its own
// `soffice --convert-to pdf` process with its own profile directory (nothing is shared
// between documents, and two conversions never fight over a profile lock), at most
// RENDER_DOCX_CONCURRENCY at once with a bounded queue (slots.ts), killed with its whole
// process group at RENDER_DOCX_TIMEOUT_MS.
//
// A Word file can point outside itself (linked images, INCLUDEPICTURE fields), and
// LibreOffice fetches such links while loading, so a conversion reaches nothing:
// - the profile blocks links from documents outside trusted locations (there are none),
//   turns macros off, and sends every protocol through a proxy at a closed port, loopback
//   included;
// - where the host allows it, soffice runs in a network namespace of its own with no
//   interface but a down loopback (unshare --net), so nothing leaves even if LibreOffice
//   ignored its settings;
// - it sees only the fonts in fonts.conf and a minimal environment (no secrets).
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { RenderingSettings } from '../../../config';
import type { Logger } from '../logger';
import { errors } from '../../../domain/shared/errors';
import { FONTS_CONF } from './html';
import { renderRefusal } from './refusals';
import { RenderSlots } from './slots';

const run = promisify(execFile);

/** At most this many conversions wait for a slot; more are refused as busy. */
const MAX_QUEUED_CONVERSIONS = 16;

/** LibreOffice settings of every conversion's fresh profile (registrymodifications.xcu). */
const PROFILE_SETTINGS = (() => {
  const item = (path: string, name: string, value: string | number | boolean) =>
    `<item oor:path="${path}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`;
  const inet = '/org.openoffice.Inet/Settings';
  const security = '/org.openoffice.Office.Common/Security/Scripting';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    // Linked images and other references out of the document are not followed.
    item(security, 'BlockUntrustedRefererLinks', true),
    // Macros never run (level 3: only from trusted locations, of which there are none).
    item(security, 'MacroSecurityLevel', 3),
    item(security, 'DisableMacrosExecution', true),
    // Manual proxy at a closed port for every protocol, with no exceptions.
    item(inet, 'ooInetProxyType', 2),
    ...['HTTP', 'HTTPS', 'FTP'].flatMap((p) => [
      item(inet, `ooInet${p}ProxyName`, '127.0.0.1'),
      item(inet, `ooInet${p}ProxyPort`, 9),
    ]),
    item(inet, 'ooInetNoProxy', ''),
    // No update checks, no first-start wizard.
    item('/org.openoffice.Office.Common/Misc', 'FirstRun', false),
    item('/org.openoffice.Setup/Office', 'ooSetupFirstStartWizard', false),
    '</oor:items>',
    '',
  ].join('\n');
})();

export interface ConvertedPdf {
  pdf: Buffer;
  /** Wall time of the conversion, waiting for a slot excluded. */
  convertMs: number;
}

export class DocxConverter {
  private readonly slots: RenderSlots;
  private readonly running = new Set<ChildProcess>();
  /** How soffice is wrapped to get a network namespace of its own: probed once. */
  private isolation: Promise<string[]> | null = null;
  private closed = false;

  constructor(
    private readonly settings: RenderingSettings,
    private readonly log: Logger,
  ) {
    this.slots = new RenderSlots(
      settings.docxConcurrency,
      MAX_QUEUED_CONVERSIONS,
      settings.queueWaitMs,
      'DOCX converter',
    );
  }

  /**
   * A DOCX (already past checkDocx in domain/outbound-mail/documents.ts) as a PDF. A file
   * LibreOffice cannot read, or one it takes too long over, is a 400 naming `field`.
   */
  async convert(docx: Buffer, opts: { field?: string } = {}): Promise<ConvertedPdf> {
    const field = opts.field ?? 'document';
    return this.slots.run(() => this.convertOnce(docx, field));
  }

  /** The command prefix that gives soffice no network, or [] where the host cannot (logged once). */
  networkIsolation(): Promise<string[]> {
    this.isolation ??= (async () => {
      for (const prefix of [
        ['unshare', '--net'],
        ['unshare', '--net', '--map-root-user'],
      ]) {
        try {
          await run(prefix[0], [...prefix.slice(1), 'true'], { timeout: 5_000 });
          return prefix;
        } catch {
          /* try the next way */
        }
      }
      this.log.warn(
        'DOCX conversions run without a network namespace of their own (unshare is not allowed here); LibreOffice profile settings still block links and proxy everything to a closed port',
      );
      return [];
    })();
    return this.isolation;
  }

  private async convertOnce(docx: Buffer, field: string): Promise<ConvertedPdf> {
    if (this.closed) throw errors.unavailable('RENDERER_UNAVAILABLE', 'The DOCX converter is shutting down.');
    const started = Date.now();
    const work = await mkdtemp(path.join(tmpdir(), 'docx-convert-'));
    try {
      const profile = path.join(work, 'profile');
      const out = path.join(work, 'out');
      await mkdir(path.join(profile, 'user'), { recursive: true });
      await mkdir(out);
      await writeFile(path.join(profile, 'user', 'registrymodifications.xcu'), PROFILE_SETTINGS);
      const input = path.join(work, 'letter.docx');
      await writeFile(input, docx);
      const prefix = await this.networkIsolation();
      const args = [
        `-env:UserInstallation=file://${profile}`,
        '--headless',
        '--invisible',
        '--nologo',
        '--norestore',
        '--nolockcheck',
        '--nodefault',
        '--convert-to',
        'pdf:writer_pdf_Export',
        '--outdir',
        out,
        input,
      ];
      const outcome = await this.spawnSoffice(
        [...prefix, this.settings.sofficePath, ...args],
        work,
        this.settings.docxTimeoutMs,
      );
      if (outcome === 'timeout')
        throw renderRefusal(
          field,
          'timeout',
          `the DOCX took longer than ${Math.round(this.settings.docxTimeoutMs / 1000)} s to lay out; simplify it or send a PDF`,
        );
      const produced = (await readdir(out)).find((f) => f.endsWith('.pdf'));
      if (!produced) {
        this.log.warn({ soffice: outcome.slice(-500) }, 'LibreOffice produced no PDF for a DOCX');
        throw renderRefusal(field, 'unreadable', 'the DOCX could not be laid out: the word processor cannot read it');
      }
      return { pdf: await readFile(path.join(out, produced)), convertMs: Date.now() - started };
    } finally {
      await rm(work, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    }
  }

  /** Runs soffice in a process group of its own; its output, or 'timeout' after killing the group. */
  private spawnSoffice(command: string[], home: string, timeoutMs: number): Promise<string | 'timeout'> {
    return new Promise((resolve, reject) => {
      const child = spawn(command[0], command.slice(1), {
        cwd: home,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: '/usr/bin:/bin', HOME: home, FONTCONFIG_FILE: FONTS_CONF, LANG: 'C.UTF-8', TZ: 'UTC' },
      });
      this.running.add(child);
      let output = '';
      const collect = (chunk: Buffer) => {
        if (output.length < 10_000) output += chunk.toString();
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, timeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        this.running.delete(child);
        this.log.error({ err }, 'LibreOffice could not be started');
        reject(errors.unavailable('RENDERER_UNAVAILABLE', 'The DOCX converter is unavailable right now.'));
      });
      child.once('close', () => {
        clearTimeout(timer);
        this.running.delete(child);
        // soffice may leave helpers behind in its group; none outlives the conversion.
        killGroup(child);
        resolve(timedOut ? 'timeout' : output);
      });
    });
  }

  /** Kills the conversions still running; conversions still waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.slots.drain();
    for (const child of this.running) killGroup(child);
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}
