// Helpers of the tests that run the service as a process (the CLI, the production install).

/** The parent's environment without anything that would point the CLI at another database or store. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DATABASE_URL|REDIS_URL|PORT|DATA_DIR|TEST_)/.test(name)) env[name] = value;
  }
  return env;
}

/** Polls `read` every 50 ms until it returns a value. */
export async function waitFor<T>(read: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
