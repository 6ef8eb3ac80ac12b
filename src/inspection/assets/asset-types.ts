// Asset types of the spec, with their family.
export const ASSET_TYPES = [
  { id: 1, description: 'Self-support', family: 'Telecom' },
  { id: 2, description: 'Building', family: 'Generic' },
  { id: 3, description: 'Bridge', family: 'Generic' },
  { id: 4, description: 'Cooling tower', family: 'Generic' },
  { id: 5, description: 'Energy utility', family: 'Generic' },
  { id: 6, description: 'Other', family: 'Generic' },
  { id: 7, description: 'Transmission tower', family: 'Generic' },
  { id: 8, description: 'Rooftop', family: 'Generic' },
  { id: 9, description: 'Monopole', family: 'Telecom' },
  { id: 10, description: 'Guyed tower', family: 'Telecom' },
  { id: 11, description: 'Rooftop', family: 'Telecom' },
  { id: 12, description: 'Watertower', family: 'Telecom' },
  { id: 13, description: 'Offshore energy utility', family: 'Generic' },
] as const;
