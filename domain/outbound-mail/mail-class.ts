// The classes of mail a piece can be sent as; its own module so that the rate tables can name
// them without importing pricing.ts, which imports the tables.
export type MailClass =
  | 'first_class'
  | 'priority'
  | 'certified'
  | 'certified_return_receipt'
  | 'carrierx_ground'
  | 'carrierx_express'
  | 'carrierx_2day'
  | 'carrierx_overnight'
  | 'carriery_ground'
  | 'carriery_2day'
  | 'carriery_next_day';
