import type { Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema.js';
import { badRequest, conflict } from '../../platform/http/errors.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { createUsersRepo } from './repo.js';

export const USERNAME_PATTERN = /^[a-z0-9_]{3,30}$/;
export const MIN_PASSWORD_LENGTH = 8;

export interface NewEmailUser {
  email: string;
  username: string;
  password: string;
}

/** Rules around user records that other areas (auth, access, bootstrap) rely on. */
export function createUsersService(db: Kysely<Schema>) {
  const repo = createUsersRepo(db);
  return {
    repo,

    /**
     * Validates and creates a user with an email/password account; returns the user. Runs inside the
     * caller's transaction (every query goes through `trx`: the embedded database has one connection).
     */
    async createEmailUser(trx: Kysely<Schema>, input: NewEmailUser) {
      const email = normaliseEmail(input.email);
      const username = input.username.trim().toLowerCase();
      if (!USERNAME_PATTERN.test(username)) {
        throw badRequest('username must be 3-30 characters of letters, digits and underscores');
      }
      if (input.password.length < MIN_PASSWORD_LENGTH) throw badRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
      if (await repo.findEmailAccount(email, trx)) throw conflict('Email is already registered');
      if (await repo.findByUsername(username, trx)) throw conflict('Username is already taken');
      return repo.createWithEmailAccount(trx, { username, email, passwordHash: await hashPassword(input.password) });
    },

    async exists(userId: string): Promise<boolean> {
      return Boolean(await repo.findById(userId));
    },
  };
}

export function normaliseEmail(email: string): string {
  const normalised = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalised)) throw badRequest('email is not a valid email address');
  return normalised;
}

export type UsersService = ReturnType<typeof createUsersService>;
