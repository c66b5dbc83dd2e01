import { SplitMix32 } from '@drmas/core';
import { SearchInputError } from '../errors.js';
import { joinContents, type SearchDocument } from '../retrieval/Retriever.js';
import { NameForge } from './NameForge.js';
import type { SearchQuestion, SearchQuestionStep } from './SearchQuestion.js';

export type EntityKind = 'country' | 'city' | 'river' | 'person' | 'company' | 'invention';

export interface KnowledgeBaseDocument extends SearchDocument {
  title: string;
  text: string;
  kind: EntityKind;
}

/** One stated fact, e.g. `{ subject: 'Varnok Telli', relation: 'born_in', object: 'Osmara' }`. */
export interface KnowledgeBaseFact {
  subject: string;
  relation: string;
  object: string;
  docId: string;
}

export interface KnowledgeBaseOptions {
  seed: number;
  /** How many entities (= documents) to invent; at least 12. */
  entities: number;
}

export interface KnowledgeBase {
  seed: number;
  documents: KnowledgeBaseDocument[];
  questions: SearchQuestion[];
  facts: KnowledgeBaseFact[];
}

export const KB_SINGLE_HOP = 'kb-1hop';
export const KB_TWO_HOP = 'kb-2hop';

const PROFESSIONS = [
  'chemist',
  'engineer',
  'physician',
  'botanist',
  'astronomer',
  'architect',
  'cartographer',
  'composer',
  'merchant',
  'mathematician',
  'painter',
  'geologist',
];
const COUNTRY_ENDINGS = ['ia', 'land', 'mark', 'ora'];
const CITY_ENDINGS = ['', '', 'ara', 'holm', 'bury', 'vik'];
const COMPANY_SUFFIXES = ['Works', 'Foundry', 'Holdings', 'Mills', 'Instruments', 'Shipyards', 'Press', 'Trading Company'];
const INVENTION_NOUNS = ['valve', 'loom', 'lens', 'engine', 'press', 'lamp', 'compass', 'pump', 'clock', 'kiln', 'telegraph', 'sextant'];

interface Country {
  name: string;
  docId: string;
  capital?: City;
  rivers: River[];
  cities: City[];
}
interface City {
  name: string;
  docId: string;
  country: Country;
  founded: number;
  river?: River;
}
interface River {
  name: string;
  docId: string;
  country: Country;
  lengthKm: number;
}
interface Person {
  name: string;
  surname: string;
  docId: string;
  profession: string;
  birthCity: City;
  birthYear: number;
}
interface Company {
  name: string;
  docId: string;
  founder: Person;
  founded: number;
  headquarters: City;
}
interface Invention {
  name: string;
  docId: string;
  inventor: Person;
  year: number;
  firstBuilt: City;
}

/**
 * Invents a world of fictional entities (syllable-built names, so real-world knowledge cannot help), one short
 * passage per entity, and single-hop and two-hop questions answerable only from those passages. The same
 * `seed` and `entities` give the same knowledge base on every machine.
 */
export function generateKnowledgeBase(options: KnowledgeBaseOptions): KnowledgeBase {
  const { seed, entities } = options;
  if (!Number.isInteger(seed)) throw new SearchInputError('seed', `must be an integer, got ${seed}`);
  if (!Number.isInteger(entities) || entities < 12) {
    throw new SearchInputError('entities', `must be an integer >= 12 (one document per entity), got ${entities}`);
  }
  const rng = SplitMix32.derive(seed, 'knowledge-base');
  const forge = new NameForge(rng.fork('names'));
  const draw = rng.fork('facts');

  const nCountries = Math.max(2, Math.round(entities * 0.05));
  const nCities = Math.max(2 * nCountries, Math.round(entities * 0.2));
  const nRivers = Math.max(nCountries, Math.round(entities * 0.08));
  const nCompanies = Math.max(1, Math.round(entities * 0.15));
  const nInventions = Math.max(1, Math.round(entities * 0.15));
  const nPeople = entities - nCountries - nCities - nRivers - nCompanies - nInventions;
  if (nPeople < 1) throw new SearchInputError('entities', `${entities} is too few to hold every kind of entity; use more`);

  // Document ids are assigned after a shuffle so that ids do not reveal an entity's kind.
  const docIds = draw.fork('doc-order').shuffle(Array.from({ length: entities }, (_, i) => `doc-${i}`));
  let nextDoc = 0;
  // One id per entity, and each entity below takes exactly one.
  const takeDocId = (): string => docIds[nextDoc++]!;

  const countries: Country[] = [];
  for (let i = 0; i < nCountries; i++) {
    countries.push({ name: forge.capitalized(2, 2, draw.pick(COUNTRY_ENDINGS)), docId: takeDocId(), rivers: [], cities: [] });
  }
  const rivers: River[] = [];
  for (let i = 0; i < nRivers; i++) {
    const country = i < nCountries ? countries[i]! : draw.pick(countries);
    const river: River = { name: `${forge.capitalized(2, 2)} River`, docId: takeDocId(), country, lengthKm: draw.range(40, 2400) };
    country.rivers.push(river);
    rivers.push(river);
  }
  const cities: City[] = [];
  for (let i = 0; i < nCities; i++) {
    const country = i < nCountries ? countries[i]! : draw.pick(countries);
    const city: City = {
      name: forge.capitalized(2, 3, draw.pick(CITY_ENDINGS)),
      docId: takeDocId(),
      country,
      founded: draw.range(700, 1650),
      river: draw.pick(country.rivers),
    };
    country.cities.push(city);
    country.capital ??= city;
    cities.push(city);
  }
  const people: Person[] = [];
  for (let i = 0; i < nPeople; i++) {
    const given = forge.capitalized(2, 2);
    const surname = forge.capitalized(2, 2);
    people.push({
      name: `${given} ${surname}`,
      surname,
      docId: takeDocId(),
      profession: draw.pick(PROFESSIONS),
      birthCity: draw.pick(cities),
      birthYear: draw.range(1700, 1899),
    });
  }
  const companies: Company[] = [];
  for (let i = 0; i < nCompanies; i++) {
    const founder = draw.pick(people);
    companies.push({
      name: `${forge.capitalized(2, 3)} ${draw.pick(COMPANY_SUFFIXES)}`,
      docId: takeDocId(),
      founder,
      founded: founder.birthYear + draw.range(20, 50),
      headquarters: draw.pick(cities),
    });
  }
  const inventions: Invention[] = [];
  for (let i = 0; i < nInventions; i++) {
    const inventor = draw.pick(people);
    inventions.push({
      name: `${forge.word(2, 2)} ${draw.pick(INVENTION_NOUNS)}`,
      docId: takeDocId(),
      inventor,
      year: inventor.birthYear + draw.range(22, 60),
      firstBuilt: draw.pick(cities),
    });
  }

  const documents: KnowledgeBaseDocument[] = [];
  const facts: KnowledgeBaseFact[] = [];
  const addDocument = (docId: string, kind: EntityKind, title: string, sentences: string[]): void => {
    const text = sentences.join(' ');
    documents.push({ id: docId, contents: joinContents(title, text), title, text, kind });
  };
  const fact = (subject: string, relation: string, object: string | number, docId: string): void => {
    facts.push({ subject, relation, object: String(object), docId });
  };

  for (const c of countries) {
    const capital = c.capital as City;
    addDocument(c.docId, 'country', c.name, [
      `${c.name} is a country whose capital is ${capital.name}.`,
      `The ${c.rivers[0]!.name} flows through ${c.name}.`,
    ]);
    fact(capital.name, 'capital_of', c.name, c.docId);
  }
  for (const r of rivers) {
    addDocument(r.docId, 'river', r.name, [
      `The ${r.name} is a river in ${r.country.name}.`,
      `The ${r.name} is ${r.lengthKm} kilometres long.`,
    ]);
    fact(r.name, 'flows_through', r.country.name, r.docId);
    fact(r.name, 'length_km', r.lengthKm, r.docId);
  }
  for (const c of cities) {
    const river = c.river as River;
    addDocument(c.docId, 'city', c.name, [
      `${c.name} is a city in ${c.country.name}.`,
      `${c.name} was founded in ${c.founded}.`,
      `${c.name} lies on the ${river.name}.`,
    ]);
    fact(c.name, 'located_in', c.country.name, c.docId);
    fact(c.name, 'founded_year', c.founded, c.docId);
    fact(c.name, 'lies_on', river.name, c.docId);
  }
  for (const p of people) {
    addDocument(p.docId, 'person', p.name, [
      `${p.name} is ${/^[aeiou]/.test(p.profession) ? 'an' : 'a'} ${p.profession} born in ${p.birthCity.name}.`,
      `${p.surname} was born in ${p.birthYear}.`,
    ]);
    fact(p.name, 'profession', p.profession, p.docId);
    fact(p.name, 'born_in', p.birthCity.name, p.docId);
    fact(p.name, 'born_year', p.birthYear, p.docId);
  }
  for (const c of companies) {
    addDocument(c.docId, 'company', c.name, [
      `${c.name} is a company founded by ${c.founder.name} in ${c.founded}.`,
      `${c.name} is headquartered in ${c.headquarters.name}.`,
    ]);
    fact(c.name, 'founded_by', c.founder.name, c.docId);
    fact(c.name, 'founded_year', c.founded, c.docId);
    fact(c.name, 'headquartered_in', c.headquarters.name, c.docId);
  }
  for (const inv of inventions) {
    const title = inv.name[0]!.toUpperCase() + inv.name.slice(1);
    addDocument(inv.docId, 'invention', title, [
      `The ${inv.name} is a device invented by ${inv.inventor.name} in ${inv.year}.`,
      `The ${inv.name} was first built in ${inv.firstBuilt.name}.`,
    ]);
    fact(inv.name, 'invented_by', inv.inventor.name, inv.docId);
    fact(inv.name, 'invented_year', inv.year, inv.docId);
    fact(inv.name, 'first_built_in', inv.firstBuilt.name, inv.docId);
  }
  documents.sort((a, b) => Number(a.id.slice(4)) - Number(b.id.slice(4)));

  const questions: SearchQuestion[] = [];
  const ask = (question: string, answers: Array<string | number>, steps: SearchQuestionStep[]): void => {
    questions.push({
      id: `q-${questions.length}`,
      question,
      answers: answers.map(String),
      supportingDocIds: steps.map((s) => s.docId),
      hops: steps.length,
      dataSource: steps.length === 1 ? KB_SINGLE_HOP : KB_TWO_HOP,
      steps,
    });
  };
  const riverAnswers = (r: River): string[] => [r.name, r.name.replace(/ River$/, '')];
  const bornIn = (p: Person): SearchQuestionStep => ({
    query: `${p.name} born`,
    docId: p.docId,
    need: 'need birthplace',
    finds: p.birthCity.name,
  });
  const bornYear = (p: Person): SearchQuestionStep => ({
    query: `${p.name} born`,
    docId: p.docId,
    need: 'need birth year',
    finds: String(p.birthYear),
  });
  const countryOf = (c: City): SearchQuestionStep => ({
    query: `${c.name} country`,
    docId: c.docId,
    need: 'need the country of the city',
    finds: c.country.name,
  });
  const inventorOf = (i: Invention): SearchQuestionStep => ({
    query: `${i.name} inventor`,
    docId: i.docId,
    need: 'need the inventor',
    finds: i.inventor.name,
  });
  const founderOf = (c: Company): SearchQuestionStep => ({
    query: `${c.name} founder`,
    docId: c.docId,
    need: 'need the founder',
    finds: c.founder.name,
  });
  const headquartersOf = (c: Company): SearchQuestionStep => ({
    query: `${c.name} headquarters`,
    docId: c.docId,
    need: 'need the headquarters',
    finds: c.headquarters.name,
  });

  for (const p of people) {
    ask(`Where was ${p.name} born?`, [p.birthCity.name], [bornIn(p)]);
    ask(`In which year was ${p.name} born?`, [p.birthYear], [bornYear(p)]);
    ask(`In which country was ${p.name} born?`, [p.birthCity.country.name], [bornIn(p), countryOf(p.birthCity)]);
  }
  for (const c of cities) {
    ask(`In which country is ${c.name} located?`, [c.country.name], [countryOf(c)]);
    ask(
      `In which year was ${c.name} founded?`,
      [c.founded],
      [{ query: `${c.name} founded`, docId: c.docId, need: 'need the founding year', finds: String(c.founded) }],
    );
    const river = c.river as River;
    ask(`On which river does ${c.name} lie?`, riverAnswers(river), [
      { query: `${c.name} river`, docId: c.docId, need: 'need the river', finds: river.name },
    ]);
    const capital = c.country.capital as City;
    ask(
      `What is the capital of the country where ${c.name} is located?`,
      [capital.name],
      [countryOf(c), { query: `${c.country.name} capital`, docId: c.country.docId, need: 'need the capital', finds: capital.name }],
    );
  }
  for (const c of countries) {
    const capital = c.capital as City;
    ask(
      `What is the capital of ${c.name}?`,
      [capital.name],
      [{ query: `${c.name} capital`, docId: c.docId, need: 'need the capital', finds: capital.name }],
    );
  }
  for (const r of rivers) {
    ask(
      `Through which country does the ${r.name} flow?`,
      [r.country.name],
      [{ query: `${r.name} country`, docId: r.docId, need: 'need the country of the river', finds: r.country.name }],
    );
    ask(
      `How long is the ${r.name} in kilometres?`,
      [r.lengthKm, `${r.lengthKm} kilometres`, `${r.lengthKm} km`],
      [{ query: `${r.name} length`, docId: r.docId, need: 'need the length', finds: String(r.lengthKm) }],
    );
  }
  for (const c of companies) {
    ask(`Who founded ${c.name}?`, [c.founder.name], [founderOf(c)]);
    ask(`Where is ${c.name} headquartered?`, [c.headquarters.name], [headquartersOf(c)]);
    ask(
      `In which year was ${c.name} founded?`,
      [c.founded],
      [{ query: `${c.name} founded`, docId: c.docId, need: 'need the founding year', finds: String(c.founded) }],
    );
    ask(`In which city was the founder of ${c.name} born?`, [c.founder.birthCity.name], [founderOf(c), bornIn(c.founder)]);
    ask(`In which country is ${c.name} headquartered?`, [c.headquarters.country.name], [headquartersOf(c), countryOf(c.headquarters)]);
  }
  for (const i of inventions) {
    ask(`Who invented the ${i.name}?`, [i.inventor.name], [inventorOf(i)]);
    ask(
      `In which year was the ${i.name} invented?`,
      [i.year],
      [{ query: `${i.name} invented`, docId: i.docId, need: 'need the year of invention', finds: String(i.year) }],
    );
    ask(`In which city was the inventor of the ${i.name} born?`, [i.inventor.birthCity.name], [inventorOf(i), bornIn(i.inventor)]);
    ask(`In which year was the inventor of the ${i.name} born?`, [i.inventor.birthYear], [inventorOf(i), bornYear(i.inventor)]);
  }

  return { seed, documents, questions, facts };
}
