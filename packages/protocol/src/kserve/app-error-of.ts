/** Test helper (nothing in src imports it): runs `fn` and returns the AppError it throws. */
import { AppError } from '../errors.ts';

export function appErrorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError, but nothing was thrown');
}
