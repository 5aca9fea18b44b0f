/**
 * The progress line of a long invocation, on stderr when it is a terminal: percent (`NVCF-PERCENT-COMPLETE`, from
 * each 202 the SDK reports), elapsed time, and where the request waits (the queue position, asked every 2 s
 * while it is queued). Nothing at all when stderr is not a terminal.
 */
import type { NvcfClient, Progress } from '@nvcf/client';
import { NvcfError } from '@nvcf/client';
// The package is CommonJS, and Node sees only some of its exports as named ones (not `Format`).
import cliProgress from 'cli-progress';

export const POSITION_INTERVAL_MS = 2000;
/** A call answered sooner draws nothing: no bar flashing before every quick answer. */
export const SHOW_AFTER_MS = 1000;

export interface ProgressView {
  /** The SDK's `onProgress`. */
  onProgress(progress: Progress): void;
  /** The request id, once a 202 has told it. */
  readonly requestId: string | undefined;
  /** Clears the line (call before printing anything else). */
  stop(): void;
}

export interface ProgressOptions {
  stream: NodeJS.WriteStream;
  /** False where the terminal shows something else meanwhile (a stream's tokens). */
  enabled: boolean;
  client: Pick<NvcfClient, 'queues'>;
  signal: AbortSignal;
}

/** A view that draws nothing but still remembers the request id (for the Ctrl-C message). */
function silent(): ProgressView {
  let requestId: string | undefined;
  return {
    onProgress: (p) => {
      requestId = p.requestId;
    },
    get requestId() {
      return requestId;
    },
    stop: () => undefined,
  };
}

export function createProgress(opts: ProgressOptions): ProgressView {
  if (!opts.enabled || !opts.stream.isTTY) return silent();
  const startedAt = Date.now();
  const bar = new cliProgress.SingleBar({
    stream: opts.stream,
    // Elapsed time from the call's start (the bar itself starts later, see SHOW_AFTER_MS); redrawn on its timer.
    format: (options, params, payload: { state: string }) =>
      `${cliProgress.Format.BarFormat(params.progress, options)} ${Math.floor(params.progress * 100)}% | ` +
      `${cliProgress.Format.TimeFormat(Math.round((Date.now() - startedAt) / 1000), options, 1)} | ${payload.state}`,
    barsize: 20,
    barCompleteChar: '█',
    barIncompleteChar: '░',
    hideCursor: true,
    clearOnComplete: true,
    // Ctrl-C is the invoke command's to handle (it aborts the call and says so).
    gracefulExit: false,
  });
  let shown = false;
  let percent = 0;
  let requestId: string | undefined;
  let queueState: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const show = () => {
    if (shown || stopped) return;
    shown = true;
    bar.start(100, percent, { state: state() });
  };
  const showTimer = setTimeout(show, SHOW_AFTER_MS);
  // The id's first block is enough to tell requests apart, and keeps the line within 80 columns (Ctrl-C prints it whole).
  const state = () =>
    [queueState ?? (requestId ? 'waiting' : 'submitting'), requestId && `req ${requestId.slice(0, 8)}`]
      .filter(Boolean)
      .join(' | ');

  const pollPosition = async () => {
    if (stopped || !requestId) return;
    let again = true;
    try {
      const { positionInQueue } = await opts.client.queues.position(requestId, { signal: opts.signal });
      queueState = positionInQueue > 0 ? `queued, ${positionInQueue} ahead` : 'running';
    } catch (err) {
      // 404: no longer queued (a worker has it, or it is done); 403: the key may not read queues; anything but a
      // gateway's answer (an abort, a dropped connection): stop asking. The percent from the status polls goes on,
      // and a failed position is not worth an error line under a progress bar.
      const status = err instanceof NvcfError ? err.status : 0;
      if (status === 404) queueState = 'running';
      again = status !== 0 && status !== 404 && status !== 403;
    }
    if (stopped) return;
    if (shown) bar.update({ state: state() });
    if (again) timer = setTimeout(pollPosition, POSITION_INTERVAL_MS);
  };

  return {
    onProgress(p) {
      const first = requestId === undefined;
      requestId = p.requestId;
      percent = Math.max(0, Math.min(100, p.percent));
      if (shown) bar.update(percent, { state: state() });
      else show();
      if (first) void pollPosition();
    },
    get requestId() {
      return requestId;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(showTimer);
      if (shown) bar.stop();
    },
  };
}
