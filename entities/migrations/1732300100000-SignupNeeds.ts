import { MigrationInterface, QueryRunner } from 'typeorm';

/** What a human said they need at signup, kept with the account (leads keep their own). */
export class SignupNeeds1732300100000 implements MigrationInterface {
  name = 'SignupNeeds1732300100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members ADD COLUMN needs text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members DROP COLUMN needs`);
  }
}
