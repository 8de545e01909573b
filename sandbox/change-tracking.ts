/**
 * changeTrackingCreateEvent's input and answer shapes and its kinds (mutations.ts): the
 * Deployment category's standard types (ChangeTrackingCategoryType DEPLOYMENT__*), the other
 * categories NerdGraph knows, the ALLOW_CUSTOM_CATEGORY_OR_TYPE rule, and the 4,095-character
 * bound on text fields (FAIL_ON_FIELD_LENGTH refuses, otherwise trimmed with a message).
 */
import { invalidInput } from './nerdgraph-errors.ts';
import type { ApmEntityOutlineSource } from './entities/apm-application.ts';

/** Change tracking refuses text fields of 4,096 characters or more (or trims them to this). */
export const CHANGE_TRACKING_MAX_TEXT = 4095;

export interface CreateEventArguments {
  changeTrackingEvent: {
    categoryAndTypeData: {
      kind: { category: string; type: string };
      categoryFields?: {
        deployment?: { version: string; changelog?: string | null; commit?: string | null; deepLink?: string | null } | null;
      } | null;
    };
    entitySearch: { query: string };
    customAttributes?: Record<string, unknown> | null;
    description?: string | null;
    groupId?: string | null;
    shortDescription?: string | null;
    timestamp?: number | null;
    user?: string | null;
  };
  dataHandlingRules?: { validationFlags?: ReadonlyArray<'ALLOW_CUSTOM_CATEGORY_OR_TYPE' | 'FAIL_ON_FIELD_LENGTH' | 'FAIL_ON_REST_API_FAILURES'> | null } | null;
}

export interface DeploymentEventSource {
  __typename: 'ChangeTrackingDeploymentEvent';
  changeTrackingId: string;
  category: string;
  type: string;
  categoryAndType: string;
  timestamp: number;
  user: string | null;
  description: string | null;
  shortDescription: string | null;
  groupId: string | null;
  customAttributes: Record<string, unknown> | null;
  entity: ApmEntityOutlineSource;
  version: string;
  changelog: string | null;
  commit: string | null;
  deepLink: string | null;
}


/** The Deployment category's standard types (ChangeTrackingCategoryType DEPLOYMENT__*), by normalised name. */
const DEPLOYMENT_TYPES: Record<string, { name: string; categoryAndType: string }> = {
  BASIC: { name: 'Basic', categoryAndType: 'DEPLOYMENT__BASIC' },
  BLUE_GREEN: { name: 'Blue Green', categoryAndType: 'DEPLOYMENT__BLUE_GREEN' },
  CANARY: { name: 'Canary', categoryAndType: 'DEPLOYMENT__CANARY' },
  ROLLING: { name: 'Rolling', categoryAndType: 'DEPLOYMENT__ROLLING' },
  SHADOW: { name: 'Shadow', categoryAndType: 'DEPLOYMENT__SHADOW' },
  OTHER: { name: 'Other', categoryAndType: 'DEPLOYMENT__OTHER' },
};

/** Categories NerdGraph knows besides Deployment (the sandbox records none of them). */
const OTHER_CATEGORIES = new Set(['BUSINESS_EVENT', 'CUSTOMER_DEFINED', 'DEPLOYMENT_LIFECYCLE', 'FEATURE_FLAG', 'OPERATIONAL']);

/** `Blue Green`, `blue-green` and `BLUE_GREEN` are one name. */
function normaliseKind(text: string): string {
  return text.trim().toUpperCase().replace(/[\s_-]+/g, '_');
}

/**
 * The event's kind: the Deployment category with a standard type (any case, spaces or
 * underscores), or with any type when ALLOW_CUSTOM_CATEGORY_OR_TYPE is set. Other categories
 * exist in NerdGraph, but the sandbox records deployments only.
 */
export function deploymentKind(kind: { category: string; type: string }, allowCustom: boolean): { type: string; categoryAndType: string } {
  const category = normaliseKind(kind.category);
  if (category === 'DEPLOYMENT') {
    const standard = DEPLOYMENT_TYPES[normaliseKind(kind.type)];
    if (standard) return { type: standard.name, categoryAndType: standard.categoryAndType };
    if (allowCustom && kind.type.trim() !== '') return { type: kind.type.trim(), categoryAndType: 'CUSTOMER_DEFINED__CUSTOM' };
    throw invalidInput(
      `Invalid type '${kind.type}' for category '${kind.category}': expected one of ${Object.values(DEPLOYMENT_TYPES)
        .map((type) => type.name)
        .join(', ')}, or set ALLOW_CUSTOM_CATEGORY_OR_TYPE`,
    );
  }
  if (OTHER_CATEGORIES.has(category) || allowCustom) {
    throw invalidInput(`The sandbox records Deployment change-tracking events only, not category '${kind.category}'`);
  }
  throw invalidInput(`Invalid category '${kind.category}': not a known change-tracking category; set ALLOW_CUSTOM_CATEGORY_OR_TYPE to use a custom one`);
}
