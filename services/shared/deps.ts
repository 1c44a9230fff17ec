// What every service function needs, built once per process (create-deps.ts) and passed explicitly.
// Types only, so that the modules that take a Deps do not import what builds one.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from './logger';
import type { ObjectStorage } from './storage';
import type { Renderers } from './rendering';

export interface Deps {
  config: Config;
  db: DataSource;
  temporal: Client;
  storage: ObjectStorage;
  log: Logger;
  /** The letter renderers (HTML, Markdown, DOCX to PDF); started on first use. */
  renderers: Renderers;
}
