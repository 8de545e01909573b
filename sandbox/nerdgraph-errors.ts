/**
 * The GraphQL errors the NerdGraph face throws for refused requests, with NerdGraph's
 * `extensions.errorClass` (FORBIDDEN for an account the key does not see, INVALID_INPUT for bad
 * arguments). Their own module so that resolvers outside actor.ts need not import it (no cycle).
 */
import { GraphQLError } from 'graphql';

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { errorClass: 'FORBIDDEN' } });
}

export function invalidInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { errorClass: 'INVALID_INPUT' } });
}
