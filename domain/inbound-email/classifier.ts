// The heuristic classifier of forwarded mail: weighted keywords per category, scored on
// the whole text with the subject counted twice, and the suggested next action that
// follows from the category and the facts found (amount due, deadlines).
//
// Score of a category = sum of the weights of its distinct keywords present in the text
// (+ the same again for keywords in the subject). The best category wins when it scores
// at least MIN_SCORE; otherwise the item is `other`. Confidence grows with the winner's
// margin over the runner-up and with its absolute score.

export const CATEGORIES = [
  'bill',
  'invoice',
  'legal_notice',
  'government',
  'bank',
  'insurance',
  'medical',
  'marketing',
  'personal',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const SUGGESTED_ACTIONS = ['pay', 'reply', 'file', 'review_deadline', 'discard', 'review'] as const;
export type SuggestedAction = (typeof SUGGESTED_ACTIONS)[number];

export const MIN_SCORE = 3;

export const KEYWORDS: Record<Exclude<Category, 'other'>, Record<string, number>> = {
  bill: {
    'amount due': 3,
    'total due': 3,
    'balance due': 2,
    'due date': 2,
    'pay by': 2,
    'payment due': 2,
    'billing period': 3,
    'service period': 2,
    'statement date': 1,
    'current charges': 3,
    utility: 2,
    electric: 2,
    electricity: 2,
    kwh: 3,
    meter: 2,
    'water service': 2,
    'gas service': 2,
    'past due': 2,
    autopay: 1,
    bill: 2,
    'service address': 2,
  },
  invoice: {
    invoice: 4,
    'invoice number': 2,
    'remit to': 2,
    'net 30': 3,
    'net 15': 3,
    'purchase order': 2,
    'po number': 2,
    'bill to': 2,
    'unit price': 2,
    qty: 1,
    subtotal: 1,
    'payment terms': 2,
  },
  legal_notice: {
    court: 3,
    summons: 4,
    lawsuit: 3,
    plaintiff: 3,
    defendant: 3,
    attorney: 2,
    'legal notice': 4,
    hearing: 2,
    judgment: 3,
    lien: 3,
    eviction: 4,
    'cease and desist': 4,
    subpoena: 4,
    'collection agency': 3,
    'final notice': 2,
    'notice to quit': 4,
    'small claims': 3,
  },
  government: {
    'internal revenue service': 4,
    irs: 3,
    'department of': 2,
    'social security': 3,
    dmv: 3,
    'motor vehicles': 3,
    taxpayer: 3,
    'tax return': 2,
    'jury duty': 4,
    'jury summons': 4,
    'city of': 2,
    'county of': 2,
    'state of': 1,
    'property tax': 3,
    passport: 2,
    'voter registration': 3,
    census: 2,
    federal: 1,
  },
  bank: {
    bank: 2,
    'checking account': 3,
    'savings account': 3,
    'account statement': 2,
    'routing number': 3,
    deposit: 1,
    withdrawal: 2,
    overdraft: 3,
    'credit card': 2,
    'debit card': 2,
    fdic: 3,
    'wire transfer': 2,
    'available balance': 2,
  },
  insurance: {
    insurance: 3,
    'policy number': 3,
    policyholder: 3,
    premium: 2,
    'claim number': 3,
    coverage: 2,
    deductible: 2,
    insured: 2,
    'explanation of benefits': 4,
    'policy renewal': 2,
  },
  medical: {
    patient: 3,
    medical: 2,
    hospital: 3,
    clinic: 2,
    physician: 2,
    doctor: 2,
    diagnosis: 3,
    prescription: 3,
    'lab results': 3,
    dental: 2,
    pharmacy: 2,
    'date of service': 2,
  },
  marketing: {
    'limited time': 3,
    'special offer': 3,
    'free gift': 3,
    '% off': 3,
    discount: 2,
    unsubscribe: 2,
    'act now': 3,
    'pre-approved': 3,
    preapproved: 3,
    promotion: 2,
    coupon: 3,
    'you have been selected': 3,
    sale: 1,
    offer: 1,
  },
  personal: {
    birthday: 3,
    wedding: 3,
    'miss you': 3,
    'love,': 3,
    'love you': 3,
    congratulations: 2,
    'holiday card': 3,
    'best wishes': 2,
    xoxo: 3,
    hugs: 2,
    grandma: 2,
    grandpa: 2,
    family: 1,
    'thinking of you': 3,
  },
};

export interface Classification {
  category: Category;
  confidence: number;
  scores: Record<string, number>;
  matched: string[];
}

function normalise(text: string): string {
  return ` ${text.toLowerCase().replace(/\s+/g, ' ')} `;
}

function contains(haystack: string, keyword: string): boolean {
  // Word boundaries on alphanumeric ends so that "bill" does not match "billion".
  const escaped = keyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const start = /^[a-z0-9]/.test(keyword) ? '(?<![a-z0-9])' : '';
  const end = /[a-z0-9]$/.test(keyword) ? '(?![a-z0-9])' : '';
  return new RegExp(`${start}${escaped}${end}`).test(haystack);
}

export function classify(subject: string, text: string): Classification {
  const body = normalise(text);
  const subj = normalise(subject);
  const scores: Record<string, number> = {};
  const matched: Record<string, string[]> = {};
  for (const [category, words] of Object.entries(KEYWORDS)) {
    let score = 0;
    matched[category] = [];
    for (const [word, weight] of Object.entries(words)) {
      const inBody = contains(body, word);
      const inSubject = contains(subj, word);
      if (inBody || inSubject) matched[category].push(word);
      score += (inBody ? weight : 0) + (inSubject ? weight : 0);
    }
    scores[category] = score;
  }
  const ranked = Object.entries(scores).sort((a, b) => b[1] - a[1]);
  const [top, second] = ranked;
  if (!top || top[1] < MIN_SCORE) {
    return { category: 'other', confidence: 0.3, scores, matched: [] };
  }
  const margin = top[1] / (top[1] + (second?.[1] ?? 0));
  const strength = Math.min(1, top[1] / 10);
  const confidence = round(Math.min(0.95, 0.25 + 0.45 * margin + 0.3 * strength));
  return { category: top[0] as Category, confidence, scores, matched: matched[top[0]] };
}

export interface ActionFacts {
  hasAmountDue: boolean;
  hasDeadline: boolean;
  text: string;
}

/** The next step a person would take with mail of this category. */
export function suggestAction(category: Category, facts: ActionFacts): SuggestedAction {
  switch (category) {
    case 'bill':
    case 'invoice':
      return 'pay';
    case 'legal_notice':
    case 'government':
      return facts.hasDeadline ? 'review_deadline' : 'reply';
    case 'insurance':
      return facts.hasDeadline ? 'review_deadline' : 'file';
    case 'bank':
      return /\b(fraud|suspicious|overdraft|unauthori[sz]ed)\b/i.test(facts.text) ? 'review' : 'file';
    case 'medical':
      return facts.hasAmountDue ? 'pay' : 'file';
    case 'marketing':
      return 'discard';
    case 'personal':
      return 'reply';
    default:
      return 'review';
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
