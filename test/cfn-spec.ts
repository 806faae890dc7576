import { createRequire } from 'node:module';

// A CloudFormation template checked offline against AWS's resource specification (the npm
// package @aws-cdk/cfnspec, spec/specification.json): every resource type exists, every property
// is one its type has, required properties are present, values have the spec's shape and
// primitive types; and within the template, every Ref, Fn::GetAtt (with an attribute the type
// has), Fn::Sub variable, Fn::If condition and DependsOn names something that exists.

interface PropertySpec {
  Required?: boolean;
  PrimitiveType?: string;
  Type?: string;
  ItemType?: string;
  PrimitiveItemType?: string;
}
interface TypeSpec {
  Properties?: Record<string, PropertySpec>;
  Attributes?: Record<string, unknown>;
}
interface Specification {
  ResourceSpecificationVersion: string;
  ResourceTypes: Record<string, TypeSpec>;
  PropertyTypes: Record<string, TypeSpec>;
}

export const CFN_SPEC = createRequire(import.meta.url)('@aws-cdk/cfnspec/spec/specification.json') as Specification;

type Json = unknown;
const TOP = [
  'AWSTemplateFormatVersion',
  'Description',
  'Metadata',
  'Parameters',
  'Mappings',
  'Conditions',
  'Transform',
  'Rules',
  'Resources',
  'Outputs',
];
const RESOURCE_KEYS = [
  'Type',
  'Properties',
  'DependsOn',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'Condition',
  'Metadata',
];
const PARAMETER_KEYS = [
  'Type',
  'Default',
  'AllowedValues',
  'AllowedPattern',
  'Description',
  'ConstraintDescription',
  'MinLength',
  'MaxLength',
  'MinValue',
  'MaxValue',
  'NoEcho',
];
const PSEUDO = [
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
];
const INTRINSICS = [
  'Ref',
  'Fn::GetAtt',
  'Fn::Sub',
  'Fn::If',
  'Fn::Join',
  'Fn::Select',
  'Fn::Split',
  'Fn::Equals',
  'Fn::Not',
  'Fn::And',
  'Fn::Or',
  'Fn::ImportValue',
  'Fn::GetAZs',
  'Fn::Base64',
  'Fn::FindInMap',
  'Condition',
];

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const intrinsicOf = (v: Json): string | undefined => {
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  return keys.length === 1 && INTRINSICS.includes(keys[0]!) && keys[0] !== 'Condition' ? keys[0] : undefined;
};

/** Every problem of the template, each naming where (a path of keys) and what; [] when it is valid. */
export function templateProblems(template: Json, spec: Specification = CFN_SPEC): string[] {
  const problems: string[] = [];
  const say = (where: string, what: string) => problems.push(`${where}: ${what}`);
  if (!isObject(template)) return ['template: not a mapping'];
  for (const key of Object.keys(template)) if (!TOP.includes(key)) say(key, 'not a template section');
  const parameters = isObject(template.Parameters) ? template.Parameters : {};
  const resources = isObject(template.Resources) ? template.Resources : {};
  const conditions = isObject(template.Conditions) ? template.Conditions : {};
  if (Object.keys(resources).length === 0) say('Resources', 'a template needs at least one resource');

  for (const [name, parameter] of Object.entries(parameters)) {
    const where = `Parameters.${name}`;
    if (!isObject(parameter)) {
      say(where, 'not a mapping');
      continue;
    }
    for (const key of Object.keys(parameter)) if (!PARAMETER_KEYS.includes(key)) say(where, `unknown key ${key}`);
    if (typeof parameter.Type !== 'string') say(where, 'no Type');
    const value = parameter.Default;
    if (value === undefined) continue;
    if (Array.isArray(parameter.AllowedValues) && !parameter.AllowedValues.includes(value))
      say(where, `Default ${JSON.stringify(value)} is not among AllowedValues`);
    if (typeof parameter.AllowedPattern === 'string' && !new RegExp(parameter.AllowedPattern).test(String(value)))
      say(where, `Default ${JSON.stringify(value)} does not match AllowedPattern`);
  }

  const refTarget = (where: string, name: string) => {
    if (!(name in parameters) && !(name in resources) && !PSEUDO.includes(name))
      say(where, `Ref to ${name}, which is not a parameter, resource or pseudo parameter`);
  };
  const getAtt = (where: string, resource: string, attribute: string) => {
    const target = resources[resource];
    if (!isObject(target)) return say(where, `Fn::GetAtt of ${resource}, which is not a resource`);
    const attributes = spec.ResourceTypes[String(target.Type)]?.Attributes ?? {};
    if (!(attribute in attributes))
      say(where, `Fn::GetAtt ${resource}.${attribute}: ${target.Type} has no attribute ${attribute}`);
  };
  // Intrinsic references anywhere in the template.
  const references = (value: Json, where: string): void => {
    if (Array.isArray(value)) return value.forEach((item, i) => references(item, `${where}[${i}]`));
    if (!isObject(value)) return;
    for (const [key, item] of Object.entries(value)) {
      const at = `${where}.${key}`;
      if (key === 'Ref') typeof item === 'string' ? refTarget(at, item) : say(at, 'Ref takes a name');
      else if (key === 'Fn::GetAtt') {
        const [resource, attribute] = Array.isArray(item) ? item : String(item).split(/\.(.*)/);
        getAtt(at, String(resource), String(attribute));
      } else if (key === 'Fn::Sub') {
        const [text, variables] = Array.isArray(item) ? item : [item, {}];
        if (typeof text !== 'string') say(at, 'Fn::Sub takes a string');
        for (const m of String(text).matchAll(/\$\{([^}!][^}]*)\}/g)) {
          const name = m[1]!.trim();
          if (isObject(variables) && name in variables) continue;
          const dot = name.indexOf('.');
          if (dot > 0 && !name.startsWith('AWS::')) getAtt(at, name.slice(0, dot), name.slice(dot + 1));
          else refTarget(at, name);
        }
        if (isObject(variables)) references(variables, at);
        continue;
      } else if (key === 'Fn::If') {
        const [condition] = Array.isArray(item) ? item : [];
        if (!(String(condition) in conditions)) say(at, `Fn::If on ${condition}, which is not a condition`);
      }
      references(item, at);
    }
  };
  references(template, 'template');

  for (const [name, resource] of Object.entries(resources)) {
    const where = `Resources.${name}`;
    if (!isObject(resource)) {
      say(where, 'not a mapping');
      continue;
    }
    for (const key of Object.keys(resource)) if (!RESOURCE_KEYS.includes(key)) say(where, `unknown key ${key}`);
    const type = String(resource.Type);
    const typeSpec = spec.ResourceTypes[type];
    if (!typeSpec) {
      say(where, `unknown resource type ${type}`);
      continue;
    }
    if (resource.Condition !== undefined && !(String(resource.Condition) in conditions))
      say(where, `Condition ${resource.Condition} is not a condition`);
    for (const target of [resource.DependsOn ?? []].flat())
      if (!(String(target) in resources)) say(where, `DependsOn ${target}, which is not a resource`);
    checkProperties(resource.Properties ?? {}, typeSpec, type, `${where}.Properties`, spec, say);
  }

  for (const [name, output] of Object.entries(isObject(template.Outputs) ? template.Outputs : {}))
    if (!isObject(output) || output.Value === undefined) say(`Outputs.${name}`, 'no Value');
  return problems;
}

type Say = (where: string, what: string) => void;

function checkProperties(
  value: Json,
  typeSpec: TypeSpec,
  resourceType: string,
  where: string,
  spec: Specification,
  say: Say,
): void {
  if (!isObject(value)) return say(where, `expected a mapping, got ${JSON.stringify(value)}`);
  const properties = typeSpec.Properties ?? {};
  for (const [name, item] of Object.entries(value)) {
    const property = properties[name];
    if (!property) say(`${where}.${name}`, `not a property of ${resourceType} here`);
    else checkValue(item, property, resourceType, `${where}.${name}`, spec, say);
  }
  for (const [name, property] of Object.entries(properties))
    if (property.Required && !(name in value)) say(where, `required property ${name} is missing`);
}

function checkValue(
  value: Json,
  property: PropertySpec,
  resourceType: string,
  where: string,
  spec: Specification,
  say: Say,
): void {
  const intrinsic = intrinsicOf(value);
  if (intrinsic === 'Fn::If' && Array.isArray((value as Record<string, Json>)['Fn::If'])) {
    const [, yes, no] = (value as Record<string, Json[]>)['Fn::If']!;
    for (const branch of [yes, no])
      if (!(isObject(branch) && branch.Ref === 'AWS::NoValue'))
        checkValue(branch, property, resourceType, where, spec, say);
    return;
  }
  if (property.PrimitiveType) {
    if (intrinsic) return;
    return checkPrimitive(value, property.PrimitiveType, where, say);
  }
  if (property.Type === 'List' || property.Type === 'Map') {
    if (intrinsic) return;
    const items = property.Type === 'List' ? value : isObject(value) ? Object.values(value) : null;
    if (!Array.isArray(items))
      return say(where, `expected a ${property.Type === 'List' ? 'list' : 'map'}, got ${JSON.stringify(value)}`);
    items.forEach((item, i) => {
      const at = `${where}[${i}]`;
      if (property.PrimitiveItemType) {
        if (!intrinsicOf(item)) checkPrimitive(item, property.PrimitiveItemType, at, say);
      } else checkValue(item, { Type: property.ItemType }, resourceType, at, spec, say);
    });
    return;
  }
  const typeName = property.Type === 'Tag' ? 'Tag' : `${resourceType}.${property.Type}`;
  const typeSpec = spec.PropertyTypes[typeName];
  if (!typeSpec) return say(where, `the spec has no property type ${typeName}`);
  if (intrinsic) return say(where, `${intrinsic} where a ${property.Type} mapping is expected`);
  checkProperties(value, typeSpec, resourceType, where, spec, say);
}

function checkPrimitive(value: Json, type: string, where: string, say: Say): void {
  const ok =
    type === 'String' || type === 'Timestamp'
      ? typeof value === 'string'
      : type === 'Integer' || type === 'Long'
        ? Number.isInteger(value)
        : type === 'Double'
          ? typeof value === 'number'
          : type === 'Boolean'
            ? typeof value === 'boolean'
            : type === 'Json'
              ? isObject(value)
              : false;
  if (!ok) say(where, `expected ${type}, got ${JSON.stringify(value)}`);
}
