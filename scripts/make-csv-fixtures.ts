// Writes the recipients CSV fixtures in test/fixtures/csv/: files shaped like the ones
// people really upload (spreadsheet exports in Windows-1252 with semicolons, BOMs, tabs,
// quoted multi-line addresses, odd headers, state names, ZIP+4, ZIPs that lost their
// leading zero, duplicates, blank and ragged rows). The files are committed; run
// `npx tsx scripts/make-csv-fixtures.ts` after changing this script.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';

const DIR = path.join(__dirname, '..', 'test', 'fixtures', 'csv');

function lines(rows: string[], eol: string): string {
  return rows.join(eol) + eol;
}

const fixtures: Array<{ file: string; bytes: Buffer; about: string }> = [
  {
    file: 'excel-semicolon-windows1252.csv',
    about:
      'Excel "CSV (semicolon)" export on a European Windows: Windows-1252, CRLF, accented names, an empty padding row',
    bytes: iconv.encode(
      lines(
        [
          'Name;Address;Address 2;City;State;ZIP',
          'José Müller;12 Rue Street;Apt 3;Austin;TX;78701',
          'François Dupont;400 Élan Ave;;Boston;MA;02134',
          'Zoë Brontë;7 Côte Rd;Suite 5;Portland;OR;97201',
          ';;;;;',
          'Søren Kierkegaard;1 Ørsted Way;;Seattle;WA;98101',
        ],
        '\r\n',
      ),
      'win1252',
    ),
  },
  {
    file: 'quoted-multiline.csv',
    about: 'UTF-8 with quoted fields holding commas, escaped quotes and line breaks inside the address',
    bytes: Buffer.from(
      lines(
        [
          'name,address,address2,city,state,zip',
          '"Robert ""Bob"" Smith","123 Main St, Rear",,Denver,CO,80202',
          '"Acme, Inc. Attn: Ana","500 Market St',
          'Floor 2",,San Francisco,CA,94105',
          '"Li Wei","9 Elm St',
          'Unit 4","Building B",Chicago,IL,60601',
          'Maria Garcia,77 Ocean Dr,,Miami,FL,33139',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'bom-aliases.csv',
    about: 'UTF-8 with a byte-order mark and common header aliases',
    bytes: Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        lines(
          [
            'Full Name,Street,Apt,Town,ST,Zipcode',
            'Ana Souza,1 First St,2B,Newark,NJ,07102',
            'Ben Okafor,22 Second Ave,,Albany,NY,12207',
          ],
          '\r\n',
        ),
        'utf8',
      ),
    ]),
  },
  {
    file: 'tabs-aliases.tsv',
    about: 'Tab-separated with snake_case aliases',
    bytes: Buffer.from(
      lines(
        [
          'recipient_name\taddress_line1\tline2\ttown\tprovince\tpostal_code',
          'Chen Jie\t10 Pine Rd\t\tSalem\tOR\t97301',
          'Dana Lee\t11 Oak Ln\tUnit 7\tProvo\tUT\t84601',
          'Eli Cohen\t12 Birch Ct\t\tBoise\tID\t83702',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'state-names.csv',
    about: 'States written as names in any case: states, DC, territories, military',
    bytes: Buffer.from(
      lines(
        [
          'name,address,city,state,zip',
          'Fay One,1 Broadway,New York,New York,10004',
          'Gus Two,1600 Pennsylvania Ave NW,Washington,district of columbia,20500',
          'Hal Three,1 Calle Sol,San Juan,Puerto Rico,00901',
          'Ivy Four,Unit 2050 Box 4190,APO,Armed Forces Europe,09096',
          'Jon Five,100 Marine Dr,Hagatna,guam,96910',
          'Kim Six,5 Lake St,Madison,Wisc,53703',
          'Lou Seven,8 Ferry Rd,Honolulu,hi,96813',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'zip-formats.csv',
    about: 'ZIP+4 spellings, ZIPs that lost their leading zero, a spreadsheet text guard and junk',
    bytes: Buffer.from(
      lines(
        [
          'name,address,city,state,zip',
          'Mo Plus,1 A St,Austin,TX,78701-1234',
          'Ned Nine,2 B St,Austin,TX,787011234',
          'Oz Space,3 C St,Austin,TX,78701 1234',
          'Pat Four,4 D St,Boston,MA,2134',
          'Quin Eight,5 E St,Boston,MA,2134-5678',
          'Rae Guard,6 F St,Boston,MA,="02134"',
          'Sam Junk,7 G St,Austin,TX,ABCDE',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'duplicates.csv',
    about: 'The same person and address three times, differing in case, spacing and punctuation',
    bytes: Buffer.from(
      lines(
        [
          'name,address,address2,city,state,zip',
          'Tom Reed,12 Main St.,Apt 1,Austin,TX,78701',
          'TOM  REED,12 main st,apt 1,AUSTIN,tx,78701-0001',
          'Tom Reed,12 Main St,Apt. 1,Austin,Texas,78701',
          'Tom Reed,12 Main St,Apt 2,Austin,TX,78701',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'blank-and-ragged.csv',
    about: 'Blank lines, short and long rows, trailing padding cells, missing values and an unknown state',
    bytes: Buffer.from(
      lines(
        [
          'name,address,city,state,zip',
          '',
          'Uma Ok,1 Good St,Austin,TX,78701',
          'Vic Short,2 Short St,Austin,TX',
          'Wes Long,3 Long St,Austin,TX,78701,extra',
          'Xia Pad,4 Pad St,Austin,TX,78701,,',
          '   ',
          ',5 Nameless St,Austin,TX,78701',
          'Yan NoCity,6 No St,,TX,78701',
          'Zed BadState,7 Bad St,Austin,XX,78701',
          '',
        ],
        '\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'first-last-names.csv',
    about: 'Separate first and last name columns and no name column',
    bytes: Buffer.from(
      lines(
        [
          'First Name,Last Name,Address 1,Address 2,City,State,Zip Code',
          'Alma,Reyes,1 Alamo Plaza,,San Antonio,TX,78205',
        ],
        '\r\n',
      ),
      'utf8',
    ),
  },
  {
    file: 'custom-headers.csv',
    about: 'Headers no alias matches, for column_map',
    bytes: iconv.encode(
      lines(
        [
          'Kunde;Strasse;Zusatz;Ort;Bundesstaat;PLZ',
          'Jürgen Groß;5 Maple St;;Fredericksburg;Texas;78624',
          'Anneliese Bäcker;6 Cedar St;Apt 9;New Braunfels;TX;78130',
        ],
        '\r\n',
      ),
      'win1252',
    ),
  },
  {
    file: 'missing-columns.csv',
    about: 'No city and no ZIP column',
    bytes: Buffer.from(lines(['name,address,state', 'Al Nope,1 Nope St,TX'], '\n'), 'utf8'),
  },
];

mkdirSync(DIR, { recursive: true });
// Line endings and encodings are the point of these files: git must not touch them.
writeFileSync(path.join(DIR, '.gitattributes'), '* -text\n');
for (const f of fixtures) {
  writeFileSync(path.join(DIR, f.file), f.bytes);
  console.log(`${f.file.padEnd(36)} ${String(f.bytes.length).padStart(5)} bytes  ${f.about}`);
}
